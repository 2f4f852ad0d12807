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

    /// The revision digest: a 64-bit hash of the generation and the body, 8 bytes per step
    /// (multiply, rotate, multiply — in the manner of xxHash/MurmurHash3; byte-at-a-time FNV-1a
    /// cost 7 % of an import). Deterministic on every platform (words read little-endian);
    /// any change of body or generation changes it with probability 1 − 2⁻⁶⁴ for practical
    /// purposes, which is what conflict detection needs (it is not a cryptographic hash).
    static func digest(generation: UInt32, body: UnsafeRawBufferPointer) -> UInt64 {
        let k1: UInt64 = 0x9E37_79B9_7F4A_7C15
        let k2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        let n = body.count
        var h = (UInt64(generation) << 32 | UInt64(truncatingIfNeeded: n)) &* k1 ^ 0x27D4_EB2F_1656_67C5
        @inline(__always) func mix(_ h: UInt64, _ w: UInt64) -> UInt64 {
            let x = h ^ ((w &* k2).rotated(31) &* k1)
            return x.rotated(27) &* k1 &+ 0x52DC_E729
        }
        var i = 0
        if let base = body.baseAddress {
            while i &+ 8 <= n {
                h = mix(h, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
                i &+= 8
            }
            if i < n {
                var tail: UInt64 = 0
                var shift: UInt64 = 0
                while i < n { tail |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) << shift; shift &+= 8; i &+= 1 }
                h = mix(h, tail)
            }
        }
        // MurmurHash3's finaliser: every input bit reaches every output bit.
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }
}

/// Big-endian bytes of a sequence number: the key of the by-sequence table.
@inline(__always)
func sequenceKey(_ seq: UInt64) -> [UInt8] {
    withUnsafeBytes(of: seq.bigEndian) { Array($0) }
}

extension UInt64 {
    /// Rotation to the left by `k` bits (0 < k < 64).
    @inline(__always)
    func rotated(_ k: UInt64) -> UInt64 { (self << k) | (self >> (64 &- k)) }
}
