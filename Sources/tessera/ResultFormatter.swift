// Printing query results: an aligned table for people, JSON, JSON Lines or CSV for
// programs.

import Tessera

/// How rows are printed.
enum OutputFormat: String, CaseIterable {
    case table, json, jsonl, csv

    /// Parses `--format`.
    static func parse(_ text: String?) throws -> OutputFormat? {
        guard let text else { return nil }
        guard let f = OutputFormat(rawValue: text.lowercased()) else {
            throw CLIError.usage("unknown format '\(text)' (formats: table, json, jsonl, csv)")
        }
        return f
    }

    /// The default: a table on a terminal, JSON Lines when piped.
    static var automatic: OutputFormat { IO.out.isTerminal ? .table : .jsonl }
}

/// Writes rows in one format, streaming where the format allows.
struct RowWriter {
    let format: OutputFormat
    let columns: [String]
    let out: Output
    /// Widest cell in a table (longer text is cut with `…`); nil: no limit.
    var maxCellWidth: Int? = 60
    /// Table rows shown at most (the rest is counted); nil: all.
    var maxTableRows: Int? = nil

    private var tableRows: [[Value]] = []
    private var count = 0

    init(format: OutputFormat, columns: [String], out: Output) {
        self.format = format
        self.columns = columns
        self.out = out
    }

    /// Starts the output (CSV header, JSON bracket).
    mutating func begin() {
        switch format {
        case .csv: out.line(columns.map(csvField).joined(separator: ","))
        case .json: out.write("[")
        case .table, .jsonl: break
        }
    }

    /// Writes (or, for a table, keeps) one row.
    mutating func row(_ r: Result) {
        switch format {
        case .jsonl:
            out.append { RowWriter.writeObject(r, into: &$0) }
            out.write("\n")
        case .json:
            out.write(count == 0 ? "\n" : ",\n")
            out.append { RowWriter.writeObject(r, into: &$0) }
        case .csv:
            out.line(r.values.map { csvField(cellText($0, csv: true)) }.joined(separator: ","))
        case .table:
            if maxTableRows.map({ tableRows.count < $0 }) ?? true { tableRows.append(r.values) }
        }
        count += 1
    }

    /// Ends the output; a table is printed here, with its row count.
    mutating func end() {
        switch format {
        case .json: out.line(count == 0 ? "]" : "\n]")
        case .csv, .jsonl: break
        case .table: printTable()
        }
    }

    private func printTable() {
        let cells: [[String]] = tableRows.map { row in row.map { clip(cellText($0, csv: false)) } }
        let numeric: [Bool] = columns.indices.map { i in
            !tableRows.isEmpty && tableRows.allSatisfy { i >= $0.count || $0[i].isNumber || $0[i].isMissing || $0[i].isNull }
        }
        var widths = columns.map { clip($0).count }
        for row in cells {
            for (i, c) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) }
        }
        if !columns.isEmpty {
            out.line(trimTrailing(columns.indices.map { " " + clip(columns[$0]).padded(widths[$0]) + " " }.joined(separator: "|")))
            out.line(widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "+"))
        }
        for row in cells {
            let parts = columns.indices.map { i -> String in
                let text = i < row.count ? row[i] : ""
                return " " + (numeric[i] ? text.leftPadded(widths[i]) : text.padded(widths[i])) + " "
            }
            out.line(trimTrailing(parts.joined(separator: "|")))
        }
        var footer = "(\(plural(count, "row")))"
        if count > tableRows.count { footer = "… \(grouped(count - tableRows.count)) more " + footer }
        out.line(footer)
    }

    /// A row as a JSON object with its keys in column order (MISSING columns left out).
    static func writeObject(_ r: Result, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        var first = true
        // `values` builds an array: once per row, not once per column.
        let values = r.values
        for (i, k) in r.keys.enumerated() where i < values.count && !values[i].isMissing {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONWriter.write(.string(k), into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(values[i], into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    private func trimTrailing(_ s: String) -> String {
        var t = Substring(s)
        while t.last == " " { t.removeLast() }
        return String(t)
    }

    private func clip(_ s: String) -> String {
        guard let maxCellWidth, s.count > maxCellWidth else { return s }
        return String(s.prefix(maxCellWidth - 1)) + "…"
    }
}

/// The text of a value in a table or CSV cell: strings bare, NULL as `NULL` (empty in
/// CSV), MISSING empty, containers as JSON.
func cellText(_ v: Value, csv: Bool) -> String {
    switch v {
    case .missing: return ""
    case .null: return csv ? "" : "NULL"
    case .string(let s):
        if csv { return s }
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    default: return JSONWriter.string(v)
    }
}

/// A CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
func csvField(_ s: String) -> String {
    guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
    var out = "\""
    for c in s { if c == "\"" { out += "\"\"" } else { out.append(c) } }
    return out + "\""
}
