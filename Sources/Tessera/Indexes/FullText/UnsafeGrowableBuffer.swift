/// A growable array over manually managed memory, for the tokenizer's per-workspace scratch
/// state. No bounds checks, no copy-on-write, no exclusivity checks: the owner (a class that
/// is only ever used by one thread at a time) must call `deallocate()` exactly once.
struct UnsafeGrowableBuffer<Element: BitwiseCopyable> {
    /// The first element.
    var base: UnsafeMutablePointer<Element>
    /// The number of initialised elements.
    var count: Int
    /// The allocated room, in elements.
    var capacity: Int

    /// Allocates room for `capacity` elements (at least 1).
    init(capacity: Int) {
        let c = Swift.max(capacity, 1)
        base = .allocate(capacity: c)
        count = 0
        self.capacity = c
    }

    /// Appends one element, growing the storage as needed.
    @inline(__always)
    mutating func append(_ e: Element) {
        if count == capacity { grow(to: count &+ 1) }
        base[count] = e
        count &+= 1
    }

    /// Appends `n` elements from `p`.
    @inline(__always)
    mutating func append(_ p: UnsafePointer<Element>, count n: Int) {
        if count &+ n > capacity { grow(to: count &+ n) }
        if n <= 16 {
            // Short runs (postings bodies, words): a loop beats a call to memmove.
            var i = 0
            while i < n {
                base[count &+ i] = p[i]
                i &+= 1
            }
        } else {
            (base + count).update(from: p, count: n)
        }
        count &+= n
    }

    /// Makes room for at least `minimum` elements, keeping the contents.
    @inline(never)
    mutating func grow(to minimum: Int) {
        var c = capacity
        while c < minimum { c = c &* 2 }
        let n = UnsafeMutablePointer<Element>.allocate(capacity: c)
        n.update(from: base, count: count)
        base.deallocate()
        base = n
        capacity = c
    }

    /// Frees the storage. The buffer must not be used afterwards.
    func deallocate() { base.deallocate() }
}
