import Tessera
#if canImport(Glibc)
import Glibc
#endif

let args = Array(CommandLine.arguments.dropFirst())
if args.first == "conformance" {
    let paths = args.dropFirst().filter { !$0.hasPrefix("--") }
    let report = ConformanceRunner().run(paths: Array(paths))
    if args.contains("--json") { print(report.json) } else { print(report.text) }
    exit(report.failed == 0 ? 0 : 1)
}
print("usage: tessera conformance PATH...")
exit(2)
