// tessera — the command-line tool for Tessera databases. See `tessera help`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let code = Commands.run(Array(CommandLine.arguments.dropFirst()), context: Context())
IO.out.flush()
IO.err.flush()
exit(code)
