#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads JSON Lines text one value at a time: one JSON value per LF-terminated line; a CR
/// before the LF and blank lines are skipped. The one JSON Lines reader of the package
/// (`JSONReader.forEachLine`, `JSONReader.parseLines` and `tessera import` use it).
///
/// ```swift
/// var lines = JSONLinesReader(bytes)
/// while let (line, value) = try lines.next() { print(line, value) }
/// ```
///
/// The reader is a position in `bytes`: copy it to remember a place and assign it back
/// to read again from there (the importer does this when a batch is retried).
package struct JSONLinesReader {
    /// The UTF-8 text; it must stay valid while the reader is used.
    package let bytes: UnsafeRawBufferPointer
    /// The byte offset of the next line.
    package private(set) var offset = 0
    /// The number of lines read so far (the 1-based number of the last one).
    package private(set) var line = 0
    let maxDepth: Int

    package init(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = JSONReader.defaultMaxDepth) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// The next value with its 1-based line number, or nil at the end of the text.
    ///
    /// - Throws: a `JSONError` whose line, column and offset refer to the whole input (so
    ///   `line` is the failing line). The reader has then moved past that line.
    package mutating func next() throws(JSONError) -> (line: Int, value: Value)? {
        guard let (line, start, text) = nextLine() else { return nil }
        do {
            return (line, try JSONReader.parse(text, maxDepth: maxDepth))
        } catch {
            var e = error
            e.offset += start
            e.line = line
            throw e
        }
    }

    /// The next non-blank line: its 1-based number, its byte offset and its text.
    mutating func nextLine() -> (line: Int, start: Int, text: UnsafeRawBufferPointer)? {
        let n = bytes.count
        guard n > 0, let base = bytes.baseAddress else { return nil }
        while offset < n {
            line += 1
            let start = offset
            let end = memchr(base + start, 0x0A, n - start).map { base.distance(to: UnsafeRawPointer($0)) } ?? n
            offset = end + 1
            var first = start
            while first < end, isJSONWhitespace(bytes[first]) { first += 1 }
            if first == end { continue }
            return (line, start, UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
        }
        return nil
    }
}
