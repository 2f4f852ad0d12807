import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Describes the machine: logical CPUs, CPU model, SQLite version.
struct MachineInfo: Sendable {
    var cpus: Int
    var cpuModel: String
    var sqliteVersion: String

    static func current() -> MachineInfo {
        var model = "unknown"
        if let f = fopen("/proc/cpuinfo", "r") {
            var line: UnsafeMutablePointer<CChar>?
            var cap = 0
            while getline(&line, &cap, f) > 0 {
                let s = String(cString: line!)
                if s.hasPrefix("model name"), let colon = s.firstIndex(of: ":") {
                    model = s[s.index(after: colon)...].trimmingSpaces()
                    break
                }
            }
            free(line)
            fclose(f)
        }
        return MachineInfo(cpus: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), cpuModel: model,
                           sqliteVersion: String(cString: sqlite3_libversion()))
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\n" || $0 == "\t" }).reversed())
    }
}

/// A number with `digits` decimals (no Foundation).
func fixed(_ x: Double, _ digits: Int) -> String {
    guard x.isFinite else { return x.isNaN ? "nan" : "inf" }
    var p = 1.0
    for _ in 0..<digits { p *= 10 }
    let r = (abs(x) * p).rounded()
    let whole = Int(r / p)
    let frac = Int(r - Double(whole) * p)
    var s = (x < 0 && r != 0 ? "-" : "") + String(whole)
    if digits > 0 {
        let f = String(frac)
        s += "." + String(repeating: "0", count: digits - f.count) + f
    }
    return s
}

/// A duration with a unit chosen for it: ns, µs, ms or s, three significant digits.
func format(seconds s: Double) -> String {
    func sig(_ v: Double) -> String { v >= 100 ? fixed(v, 0) : (v >= 10 ? fixed(v, 1) : fixed(v, 2)) }
    if s < 1e-6 { return sig(s * 1e9) + " ns" }
    if s < 1e-3 { return sig(s * 1e6) + " µs" }
    if s < 1 { return sig(s * 1e3) + " ms" }
    return sig(s) + " s"
}

/// A byte count in MB (10⁶) with one decimal, or KB below 1 MB.
func format(bytes b: Int) -> String {
    b >= 1_000_000 ? fixed(Double(b) / 1e6, 1) + " MB" : fixed(Double(b) / 1e3, 1) + " KB"
}

private func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
    let n = s.count
    if n >= width { return s }
    let fill = String(repeating: " ", count: width - n)
    return right ? fill + s : s + fill
}

/// The text table and the JSON document of a run.
struct Report {
    let options: Options
    let machine: MachineInfo
    let results: [Measurement]
    let mismatches: [String]
    let notes: [String]
    let explain: [String]

    var text: String {
        var out = ""
        out += "tessera-bench: N=\(options.n) seed=\(options.seed) reps: queries \(options.reps), writes \(options.writeReps)"
        out += " | \(machine.cpus) CPUs, \(machine.cpuModel), SQLite \(machine.sqliteVersion)\n"
        out += "Tessera: \(tesseraConfiguration); SQLite: Couchbase Lite's configuration (WAL, synchronous=normal)\n"
        out += "times: median per operation for queries (per repetition for loads, updates, index creation);"
        out += " ratio = SQLite / Tessera, higher is better for Tessera\n\n"
        let header = [pad("workload", 44), pad("ops", 7, right: true), pad("Tessera", 11, right: true),
                      pad("SQLite", 11, right: true), pad("ratio", 8, right: true), "  ", pad("target", 14), "met"]
        out += header.joined(separator: " ") + "\n"
        out += String(repeating: "-", count: 110) + "\n"
        for m in results {
            let t: String
            let s: String
            if m.isSize {
                t = m.tesseraBytes.map { format(bytes: $0) } ?? "-"
                s = m.sqliteBytes.map { format(bytes: $0) } ?? "-"
            } else {
                let div = m.perOp ? Double(max(1, m.ops)) : 1
                t = m.tesseraMedian.map { format(seconds: $0 / div) } ?? "-"
                s = m.sqliteMedian.map { format(seconds: $0 / div) } ?? "-"
            }
            let ratio = m.ratio.map { fixed($0, 2) } ?? "-"
            let met = m.met.map { $0 ? "yes" : "NO" } ?? ""
            let mismatch = (m.tesseraOutcome != nil && m.sqliteOutcome != nil && m.tesseraOutcome != m.sqliteOutcome) ? "  ROWS DIFFER" : ""
            out += [pad(m.title, 44), pad(m.isSize ? "" : String(m.ops), 7, right: true), pad(t, 11, right: true),
                    pad(s, 11, right: true), pad(ratio, 8, right: true), "  ", pad(m.target?.label ?? "", 14), met + mismatch]
                .joined(separator: " ") + "\n"
        }
        let withTargets = results.filter { $0.met != nil }
        if !withTargets.isEmpty {
            out += "\ntargets met: \(withTargets.filter { $0.met == true }.count) of \(withTargets.count)\n"
        }
        if !notes.isEmpty { out += "\n" + notes.map { "- " + $0 }.joined(separator: "\n") + "\n" }
        if !explain.isEmpty { out += "\n" + explain.joined(separator: "\n\n") + "\n" }
        if mismatches.isEmpty {
            if options.comparing { out += "\nrow counts: both engines agree on every workload\n" }
        } else {
            out += "\n*** ROW COUNT MISMATCH: the engines disagree (\(mismatches.count)) ***\n"
            out += mismatches.map { "  " + $0 }.joined(separator: "\n") + "\n"
        }
        return out
    }

    /// How Tessera's databases were opened.
    var tesseraConfiguration: String {
        var parts: [String] = []
        if let m = options.tesseraMapSize { parts.append("initial map \(m >> 20) MiB") }
        if options.tesseraNoSync { parts.append("noSync") }
        return parts.isEmpty ? "default DatabaseConfiguration" : parts.joined(separator: ", ")
    }

    var json: String {
        var w = JSONTextBuilder()
        w.open()
        w.key("n"); w.int(options.n)
        w.key("seed"); w.int(Int(truncatingIfNeeded: options.seed))
        w.key("reps"); w.int(options.reps)
        w.key("writeReps"); w.int(options.writeReps)
        w.key("tesseraConfiguration"); w.string(tesseraConfiguration)
        w.key("machine"); w.open()
        w.key("cpus"); w.int(machine.cpus)
        w.key("cpuModel"); w.string(machine.cpuModel)
        w.key("sqliteVersion"); w.string(machine.sqliteVersion)
        w.close()
        w.key("workloads"); w.openArray()
        for m in results {
            w.element(); w.open()
            w.key("key"); w.string(m.key)
            w.key("title"); w.string(m.title)
            if m.isSize {
                if let t = m.tesseraBytes { w.key("tesseraBytes"); w.int(t) }
                if let s = m.sqliteBytes { w.key("sqliteBytes"); w.int(s) }
            } else {
                w.key("ops"); w.int(m.ops)
                w.key("perOperation"); w.raw(m.perOp ? "true" : "false")
                if let t = m.tesseraMedian { w.key("tesseraSeconds"); w.double(t) }
                if let s = m.sqliteMedian { w.key("sqliteSeconds"); w.double(s) }
                w.key("tesseraRepetitions"); w.openArray(); for x in m.tessera { w.element(); w.double(x) }; w.closeArray()
                w.key("sqliteRepetitions"); w.openArray(); for x in m.sqlite { w.element(); w.double(x) }; w.closeArray()
                if let o = m.tesseraOutcome { w.key("tesseraRows"); w.int(o.rows) }
                if let o = m.sqliteOutcome { w.key("sqliteRows"); w.int(o.rows) }
            }
            if let r = m.ratio { w.key("ratio"); w.double(r) }
            if let t = m.target {
                w.key("target"); w.string(t.label)
                w.key("targetMinRatio"); w.double(t.minRatio)
            }
            if let met = m.met { w.key("met"); w.raw(met ? "true" : "false") }
            w.close()
        }
        w.closeArray()
        w.key("notes"); w.openArray(); for n in notes { w.element(); w.string(n) }; w.closeArray()
        w.key("mismatches"); w.openArray(); for n in mismatches { w.element(); w.string(n) }; w.closeArray()
        w.close()
        return w.text + "\n"
    }
}
