import Tessera


/// Document keys as readable strings.
func docKey(_ s: String) -> [UInt8] { Array(s.utf8) }

/// Sorted readable names of matching documents.
func names(_ m: FullTextMatches<[UInt8]>) -> [String] {
    m.documents.map { String(decoding: $0, as: UTF8.self) }.sorted()
}
