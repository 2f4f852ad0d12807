import Foundation

/// How a child process ended: its exit status, or the signal that killed it, or a timeout.
struct ChildOutcome: CustomStringConvertible {
    var status: Int32?
    var signal: Int32?
    var timedOut = false
    var out = ""
    var err = ""
    var seconds = 0.0

    /// True when it exited by itself (with any status): no signal, no timeout.
    var exited: Bool { status != nil }

    var description: String {
        let how = timedOut ? "timed out" : signal.map { "killed by signal \($0)" } ?? "exit \(status!)"
        return "\(how) after \(String(format: "%.2f", seconds)) s; stderr: \(err.suffix(400))"
    }
}

/// Runs executables as child processes with a deadline (a crash or a hang must not take the
/// test runner with it), reporting a death by signal as such.
enum ChildProcess {
    /// Runs `path args…` with empty standard input; kills it (SIGKILL) after `timeout` seconds.
    /// `prefix` runs it through another program (`setpriv …`).
    static func run(_ path: String, _ args: [String], timeout: Double = 30, prefix: [String] = []) -> ChildOutcome {
        let argv = prefix + [path] + args
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-child-\(UUID().uuidString)").path
        let outPath = base + ".out", errPath = base + ".err"
        defer { unlink(outPath); unlink(errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        // No backtracer: a crash should end the child at once, not after symbolication.
        var env = ProcessInfo.processInfo.environment
        env["SWIFT_BACKTRACE"] = "enable=no"
        var cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in cEnv { free(p) } }
        var pid: pid_t = 0
        let start = Date()
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, &cArgs, &cEnv)
        guard rc == 0 else { return ChildOutcome(status: nil, signal: nil, err: "spawn failed: \(rc)") }
        var outcome = ChildOutcome()
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if Date().timeIntervalSince(start) > timeout {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                outcome.timedOut = true
                break
            }
            usleep(2000)
        }
        outcome.seconds = Date().timeIntervalSince(start)
        if !outcome.timedOut {
            // WIFEXITED / WTERMSIG by hand (the macros are not imported).
            if status & 0x7F == 0 { outcome.status = (status >> 8) & 0xFF } else { outcome.signal = status & 0x7F }
        }
        outcome.out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        outcome.err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return outcome
    }

    /// The built `tessera` executable.
    static var tessera: String? { CLI.executable }
}
