// tessera — the command-line tool for Tessera databases. See `tessera help`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Arguments are text (document IDs, JSON, queries): one that is not valid UTF-8 is an error
// here, rather than U+FFFD after Swift repairs it.
for i in 1..<Int(CommandLine.argc) {
    guard let raw = CommandLine.unsafeArgv[i] else { continue }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
    if String(validating: bytes, as: UTF8.self) == nil {
        let offset = invalidUTF8Offset(bytes) ?? 0
        IO.err.line("tessera: argument \(i) is not valid UTF-8 (byte \(offset + 1))")
        IO.err.flush()
        exit(ExitCode.usage)
    }
}

let code = Commands.run(Array(CommandLine.arguments.dropFirst()), context: Context())
IO.out.flush()
IO.err.flush()
exit(code)
