// The value stored under a document ID in a collection's `doc:` table:
//
//   offset  size  field
//   0       1     flags (bit 0: deleted / tombstone)
//   1       8     sequence, little-endian u64
//   9       4     revision generation, little-endian u32
//   13      8     revision digest (FNV-1a 64 of generation ‖ body), little-endian
//   21      8     expiration, ms since the Unix epoch, little-endian i64; 0 = none
//   29      …     body in the binary document format
//
// Fixed-width header so that metadata reads are plain loads; the body starts at a fixed
// offset so it can be read in place from LMDB's memory map.

@usableFromInline
struct DocumentRecord {
    static let headerSize = 29

    var deleted: Bool
    var sequence: UInt64
    var generation: UInt32
    var digest: UInt64
    var expiration: Int64

    /// The opaque revision ID: `generation-digest` in hex.
    var revisionID: String { Self.revisionID(generation: generation, digest: digest) }

    static func revisionID(generation: UInt32, digest: UInt64) -> String {
        let hex = String(digest, radix: 16)
        return "\(generation)-" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Reads the header of a stored record; nil if it is too short to be one.
    static func header(_ bytes: UnsafeRawBufferPointer) -> DocumentRecord? {
        guard bytes.count >= headerSize else { return nil }
        return DocumentRecord(
            deleted: bytes[0] & 1 != 0,
            sequence: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 1, as: UInt64.self)),
            generation: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 9, as: UInt32.self)),
            digest: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 13, as: UInt64.self)),
            expiration: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 21, as: Int64.self)))
    }

    /// The body bytes of a stored record.
    @inline(__always)
    static func body(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[min(headerSize, bytes.count)...])
    }

    /// Writes this header into the first `headerSize` bytes of `out`.
    func writeHeader(into out: UnsafeMutableRawBufferPointer) {
        out[0] = deleted ? 1 : 0
        out.storeBytes(of: sequence.littleEndian, toByteOffset: 1, as: UInt64.self)
        out.storeBytes(of: generation.littleEndian, toByteOffset: 9, as: UInt32.self)
        out.storeBytes(of: digest.littleEndian, toByteOffset: 13, as: UInt64.self)
        out.storeBytes(of: expiration.littleEndian, toByteOffset: 21, as: Int64.self)
    }

    /// FNV-1a over the generation and the body: the revision digest.
    static func digest(generation: UInt32, body: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        var g = generation
        for _ in 0..<4 {
            h = (h ^ UInt64(g & 0xFF)) &* 0x0000_0100_0000_01B3
            g >>= 8
        }
        for b in body { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }
}

/// Big-endian bytes of a sequence number: the key of the by-sequence table.
@inline(__always)
func sequenceKey(_ seq: UInt64) -> [UInt8] {
    withUnsafeBytes(of: seq.bigEndian) { Array($0) }
}
