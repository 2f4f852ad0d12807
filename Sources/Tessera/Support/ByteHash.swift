/// A fast 64-bit hash of a short byte string (eight bytes at a time, multiply–xorshift, then a
/// final mix so that the low bits depend on every byte). For grouping and interning equal
/// byte strings in memory; never stored, and not meant to resist chosen input.
@inline(__always)
func hashBytes(_ p: UnsafeRawPointer, _ n: Int) -> UInt64 {
    var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: n)
    var i = 0
    while i &+ 8 <= n {
        let w = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        h = (h ^ w) &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 32
        i &+= 8
    }
    if i < n {
        var w: UInt64 = 0
        var shift: UInt64 = 0
        let b = p.assumingMemoryBound(to: UInt8.self)
        while i < n {
            w |= UInt64(b[i]) << shift
            shift &+= 8
            i &+= 1
        }
        h = (h ^ w) &* 0xC4CE_B9FE_1A85_EC53
    }
    h ^= h >> 29
    h = h &* 0xBF58_476D_1CE4_E5B9
    h ^= h >> 32
    return h
}

/// `hashBytes` of a buffer (an empty buffer may have no base address).
@inline(__always)
func hashBytes(_ b: UnsafeRawBufferPointer) -> UInt64 {
    guard let base = b.baseAddress else { return hashBytes(UnsafeRawPointer(bitPattern: 1)!, 0) }
    return hashBytes(base, b.count)
}

/// True if the `n` bytes at `a` and at `b` are equal (eight at a time: for short strings,
/// cheaper than a call to memcmp).
@inline(__always)
func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
    var i = 0
    while i &+ 8 <= n {
        if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
            return false
        }
        i &+= 8
    }
    while i < n {
        if a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
        i &+= 1
    }
    return true
}

/// True if two byte buffers hold the same bytes.
@inline(__always)
func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    a.count == b.count && (a.count == 0 || bytesEqual(a.baseAddress!, b.baseAddress!, a.count))
}
