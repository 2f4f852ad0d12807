#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The documents matching a full-text query, each with its rank.
struct FullTextMatches<DocKey: Hashable> {
    /// Matching documents → rank (BM25, ≥ 0, larger = more relevant; 0 when evaluated
    /// without ranking).
    var ranks: [DocKey: Double]

    /// Creates a match set.
    init(ranks: [DocKey: Double]) {
        self.ranks = ranks
    }

    /// The number of matching documents.
    var count: Int { ranks.count }

    /// True if no document matches.
    var isEmpty: Bool { ranks.isEmpty }

    /// True if `doc` matches.
    func contains(_ doc: DocKey) -> Bool { ranks[doc] != nil }

    /// The rank of a matching document, nil if it does not match.
    func rank(of doc: DocKey) -> Double? { ranks[doc] }

    /// The matching documents, unordered.
    var documents: Dictionary<DocKey, Double>.Keys { ranks.keys }
}

extension FullTextMatches: Sendable where DocKey: Sendable {}

/// Matching document numbers (ascending) and their ranks, as the engine consumes them.
struct FullTextRankedNumbers {
    var documents: [UInt32]
    var ranks: [Double]
}

extension CompiledFullTextQuery {
    /// Finds the matching documents and ranks them.
    ///
    /// Terms, prefixes and phrases are looked up once each; AND/OR/NOT combine document
    /// sets; phrases need consecutive positions (stop-word gaps included) in one column;
    /// `NEAR/n` needs instances of adjacent operands in one column, not overlapping, with at
    /// most n positions between them.
    ///
    /// Rank: BM25 (k1 = 1.2, b = 0.75) summed over the query's terms, prefixes and phrases
    /// outside the right side of NOT. For each such unit u with document frequency n(u) among
    /// N documents and frequency f in a document of length |d| (indexed tokens; average
    /// avgdl): idf(u) · f · (k1 + 1) / (f + k1 · (1 − b + b · |d| / avgdl)), with
    /// idf(u) = ln(1 + (N − n(u) + 0.5) / (n(u) + 0.5)), which is never negative.
    ///
    /// - Parameters:
    ///   - reader: The index's postings (one consistent snapshot).
    ///   - ranking: When false, skips scoring; every rank is 0.
    /// - Returns: The matching documents with their ranks.
    /// - Throws: Whatever the reader throws.
    func evaluate<R: PostingsReader>(in reader: R, ranking: Bool = true) throws -> FullTextMatches<R.DocKey> {
        let found = try evaluateNumbers(in: reader, ranking: ranking)
        var ranks: [R.DocKey: Double] = [:]
        ranks.reserveCapacity(found.documents.count)
        for (d, r) in zip(found.documents, found.ranks) {
            guard let key = try reader.documentKey(forNumber: d) else {
                throw FullTextIndexCorruption("document number \(d) has no document")
            }
            ranks[key] = r
        }
        return FullTextMatches(ranks: ranks)
    }

    /// Like `evaluate(in:ranking:)`, by document number.
    func evaluateNumbers<R: PostingsReader>(in reader: R, ranking: Bool) throws -> FullTextRankedNumbers {
        var evaluator = FullTextEvaluator<R>(query: self, reader: reader)
        return try evaluator.run(ranking: ranking)
    }
}

/// One occurrence of a unit in a document: column and first/last position.
struct UnitInstance {
    var column: Int
    var start: Int
    var end: Int
}

/// A unit's documents (ascending) with its frequency in each and each one's length.
struct UnitList {
    var documents: [UInt32] = []
    var frequencies: [UInt32] = []
    var lengths: [UInt32] = []
}

/// Decodes the positions of a phrase's parts in one document into sorted keys
/// (column << 32 | position) and counts where part k sits `offset[k]` after part 0.
/// Buffers are reused from document to document.
final class PhraseMatcher {
    // Raw storage only: this runs once per candidate document, so no array copy-on-write or
    // exclusivity bookkeeping on the way.
    private let parts: Int
    private let keys: UnsafeMutablePointer<UnsafeMutablePointer<UInt64>>
    private let counts: UnsafeMutablePointer<Int>
    private let capacities: UnsafeMutablePointer<Int>
    private let cursor: UnsafeMutablePointer<Int>
    private let offsets: UnsafeMutablePointer<UInt64>

    init(offsets: [Int]) {
        parts = offsets.count
        keys = .allocate(capacity: parts)
        counts = .allocate(capacity: parts)
        capacities = .allocate(capacity: parts)
        cursor = .allocate(capacity: parts)
        self.offsets = .allocate(capacity: parts)
        for k in 0..<parts {
            keys[k] = .allocate(capacity: 64)
            counts[k] = 0
            capacities[k] = 64
            self.offsets[k] = UInt64(offsets[k])
        }
    }

    deinit {
        for k in 0..<parts { keys[k].deallocate() }
        keys.deallocate()
        counts.deallocate()
        capacities.deallocate()
        cursor.deallocate()
        offsets.deallocate()
    }

    /// Decodes part `k`'s encoded positions.
    @inline(__always)
    func decode(part k: Int, _ raw: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(raw)
        var n = 0
        var out = keys[k]
        while !reader.atEnd {
            let column = try reader.varint()
            let count = try reader.varint()
            guard count <= UInt64(raw.count), column <= UInt64(Int32.max) else { throw FullTextIndexCorruption("bad positions") }
            if n + Int(count) > capacities[k] {
                let size = 2 * (n + Int(count))
                let grown = UnsafeMutablePointer<UInt64>.allocate(capacity: size)
                grown.update(from: out, count: n)
                out.deallocate()
                out = grown
                keys[k] = grown
                capacities[k] = size
            }
            var p: UInt64 = 0
            let high = column << 32
            for _ in 0..<count {
                p &+= try reader.varint()
                guard p <= UInt64(UInt32.max) else { throw FullTextIndexCorruption("position out of range") }
                out[n] = high | p
                n += 1
            }
        }
        counts[k] = n
    }

    /// For a two-part phrase: decodes part 0's positions (`a`), then reads part 1's (`b`) one
    /// at a time, counting those whose position minus part 1's offset is one of part 0's in the
    /// same column — what `decode` of both parts and `count()` give, without storing part 1's
    /// positions or walking them a second time.
    @inline(__always)
    func countPair(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) throws -> Int {
        try decode(part: 0, a)
        let first = keys[0]
        let firstCount = counts[0]
        let offset = offsets[1]
        var reader = ByteReader(b)
        var i = 0
        var matches = 0
        while !reader.atEnd {
            let column = try reader.varint()
            let count = try reader.varint()
            guard count <= UInt64(b.count), column <= UInt64(Int32.max) else { throw FullTextIndexCorruption("bad positions") }
            var p: UInt64 = 0
            let high = column << 32
            for _ in 0..<count {
                p &+= try reader.varint()
                guard p <= UInt64(UInt32.max) else { throw FullTextIndexCorruption("position out of range") }
                // Part 0's position for this one: in the same column, `offset` before it.
                guard p >= offset else { continue }
                let want = high | (p - offset)
                while i < firstCount && first[i] < want { i += 1 }
                if i == firstCount { return matches }
                if first[i] == want { matches += 1 }
            }
        }
        return matches
    }

    /// Makes part `k`'s positions those already decoded for part `j` (the same word).
    @inline(__always)
    func copy(part k: Int, from j: Int) {
        let n = counts[j]
        if n > capacities[k] {
            keys[k].deallocate()
            keys[k] = .allocate(capacity: n)
            capacities[k] = n
        }
        keys[k].update(from: keys[j], count: n)
        counts[k] = n
    }

    /// The phrase's occurrences among the decoded parts; `found` gets each one's
    /// (column, first position).
    @inline(__always)
    func count(_ found: ((Int, Int) -> Void)? = nil) -> Int {
        let first = keys[0]
        let firstCount = counts[0]
        if parts == 1 {
            if let found { for i in 0..<firstCount { found(Int(first[i] >> 32), Int(first[i] & 0xFFFF_FFFF)) } }
            return firstCount
        }
        cursor.update(repeating: 0, count: parts)
        var matches = 0
        candidates: for i in 0..<firstCount {
            let x = first[i]
            for k in 1..<parts {
                // Same column only: the position must not carry into the column bits.
                if (x & 0xFFFF_FFFF) &+ offsets[k] > 0xFFFF_FFFF { continue candidates }
                let want = x &+ offsets[k]
                let list = keys[k]
                let n = counts[k]
                var j = cursor[k]
                while j < n && list[j] < want { j += 1 }
                cursor[k] = j
                if j == n { break candidates }
                if list[j] != want { continue candidates }
            }
            matches += 1
            found?(Int(x >> 32), Int(x & 0xFFFF_FFFF))
        }
        return matches
    }
}

/// Evaluates one compiled query over one reader, on sorted document-number lists.
struct FullTextEvaluator<R: PostingsReader> {
    typealias Node = CompiledFullTextQuery.Node

    let query: CompiledFullTextQuery
    let reader: R
    /// Per leaf: whether its positions are needed (phrases, NEAR, column filters).
    let needsPositions: [Bool]
    var leafLists: [PostingList?]
    var unitLists: [UnitList?]

    init(query: CompiledFullTextQuery, reader: R) {
        self.query = query
        self.reader = reader
        var needs = query.leaves.map { $0.column != nil }
        for u in query.units where u.parts.count > 1 {
            for p in u.parts { needs[p.leaf] = true }
        }
        func markNear(_ n: Node) {
            switch n {
            case .near(let us, _): for u in us { for p in query.units[u].parts { needs[p.leaf] = true } }
            case .and(let xs), .or(let xs): for x in xs { markNear(x) }
            case .not(let a, let b): markNear(a); markNear(b)
            case .empty, .never, .unit: break
            }
        }
        markNear(query.root)
        needsPositions = needs
        leafLists = Array(repeating: nil, count: query.leaves.count)
        unitLists = Array(repeating: nil, count: query.units.count)
    }

    mutating func run(ranking: Bool) throws -> FullTextRankedNumbers {
        if query.isEmpty { return FullTextRankedNumbers(documents: [], ranks: []) }
        if ranking, let units = Self.conjunctionOfUnits(query.root) { return try rankedConjunction(units) }
        let docs = try evaluate(query.root)
        var ranks = [Double](repeating: 0, count: docs.count)
        guard ranking, !docs.isEmpty else { return FullTextRankedNumbers(documents: docs, ranks: ranks) }
        var positive: [Int] = []
        collectPositiveUnits(query.root, into: &positive)
        let stats = try reader.corpusStatistics()
        let avgdl = stats.averageDocumentLength > 0 ? stats.averageDocumentLength : 1
        let k1 = FullTextSearch.bm25K1
        let b = FullTextSearch.bm25B
        for u in positive {
            let list = try unitList(u)
            let df = Double(list.documents.count)
            let n = max(Double(stats.documentCount), df, 1)
            let idf = log(1 + (n - df + 0.5) / (df + 0.5))
            let lengthFactor = k1 * b / avgdl
            let base = k1 * (1 - b)
            docs.withUnsafeBufferPointer { rd in
                list.documents.withUnsafeBufferPointer { ud in
                    ranks.withUnsafeMutableBufferPointer { out in
                        var i = 0
                        var j = 0
                        while i < rd.count && j < ud.count {
                            let a = rd[i], c = ud[j]
                            if a < c {
                                i += 1
                            } else if c < a {
                                j += 1
                            } else {
                                let f = Double(list.frequencies[j])
                                let norm = base + lengthFactor * Double(list.lengths[j])
                                out[i] += idf * f * (k1 + 1) / (f + norm)
                                i += 1
                                j += 1
                            }
                        }
                    }
                }
            }
        }
        return FullTextRankedNumbers(documents: docs, ranks: ranks)
    }

    /// The distinct units of a query that is one unit or an AND of units (the common shape:
    /// words and phrases), else nil.
    static func conjunctionOfUnits(_ n: Node) -> [Int]? {
        switch n {
        case .unit(let u): return [u]
        case .and(let xs):
            var out: [Int] = []
            for x in xs {
                guard case .unit(let u) = x else { return nil }
                if !out.contains(u) { out.append(u) }
            }
            return out.isEmpty ? nil : out
        default: return nil
        }
    }

    /// An AND of units, matched and ranked in one pass: the rarest unit's documents are looked
    /// up in the others by galloping, and each match's BM25 terms come straight from the
    /// entries found (no second walk per unit).
    mutating func rankedConjunction(_ units: [Int]) throws -> FullTextRankedNumbers {
        var lists: [UnitList] = []
        for u in units { lists.append(try unitList(u)) }
        lists.sort { $0.documents.count < $1.documents.count }
        let stats = try reader.corpusStatistics()
        let avgdl = stats.averageDocumentLength > 0 ? stats.averageDocumentLength : 1
        let k1 = FullTextSearch.bm25K1
        let lengthFactor = k1 * FullTextSearch.bm25B / avgdl
        let base = k1 * (1 - FullTextSearch.bm25B)
        let idfs = lists.map { l -> Double in
            let df = Double(l.documents.count)
            let n = max(Double(stats.documentCount), df, 1)
            return log(1 + (n - df + 0.5) / (df + 0.5))
        }
        @inline(__always) func score(_ l: UnitList, _ i: Int, _ idf: Double) -> Double {
            let f = Double(l.frequencies[i])
            return idf * f * (k1 + 1) / (f + base + lengthFactor * Double(l.lengths[i]))
        }
        var docs: [UInt32] = []
        var ranks: [Double] = []
        let first = lists[0]
        docs.reserveCapacity(first.documents.count)
        ranks.reserveCapacity(first.documents.count)
        var cursors = [Int](repeating: 0, count: lists.count)
        first.documents.withUnsafeBufferPointer { d0 in
            candidates: for i in 0..<d0.count {
                let d = d0[i]
                var rank = score(first, i, idfs[0])
                for k in 1..<lists.count {
                    let j = lists[k].documents.withUnsafeBufferPointer { Self.gallop($0, from: cursors[k], to: d) }
                    cursors[k] = j
                    if j == lists[k].documents.count { break candidates }
                    if lists[k].documents[j] != d { continue candidates }
                    rank += score(lists[k], j, idfs[k])
                }
                docs.append(d)
                ranks.append(rank)
            }
        }
        return FullTextRankedNumbers(documents: docs, ranks: ranks)
    }

    /// Units that count for ranking: all but those on the right side of a NOT.
    func collectPositiveUnits(_ n: Node, into out: inout [Int]) {
        switch n {
        case .empty, .never: return
        case .unit(let u): if !out.contains(u) { out.append(u) }
        case .near(let us, _): for u in us where !out.contains(u) { out.append(u) }
        case .and(let xs), .or(let xs): for x in xs { collectPositiveUnits(x, into: &out) }
        case .not(let a, _): collectPositiveUnits(a, into: &out)
        }
    }

    // MARK: - Boolean structure

    mutating func evaluate(_ n: Node) throws -> [UInt32] {
        switch n {
        case .empty, .never:
            return []
        case .unit(let u):
            return try unitList(u).documents
        case .near(let us, let ds):
            return try near(us, ds)
        case .and(let xs):
            var lists = try xs.map { try evaluate($0) }
            lists.sort { $0.count < $1.count }
            var result = lists[0]
            for l in lists.dropFirst() {
                if result.isEmpty { break }
                result = Self.intersect(result, l)
            }
            return result
        case .or(let xs):
            var result: [UInt32] = []
            for x in xs { result = Self.union(result, try evaluate(x)) }
            return result
        case .not(let a, let b):
            let left = try evaluate(a)
            if left.isEmpty { return left }
            return Self.difference(left, try evaluate(b))
        }
    }

    // MARK: - Sorted-list algebra

    /// Documents in both (ascending); galloping through the longer list.
    static func intersect(_ x: [UInt32], _ y: [UInt32]) -> [UInt32] {
        let (small, large) = x.count <= y.count ? (x, y) : (y, x)
        var out: [UInt32] = []
        out.reserveCapacity(small.count)
        small.withUnsafeBufferPointer { a in
            large.withUnsafeBufferPointer { b in
                var j = 0
                for v in a {
                    j = gallop(b, from: j, to: v)
                    if j == b.count { break }
                    if b[j] == v { out.append(v); j += 1 }
                }
            }
        }
        return out
    }

    /// The first index ≥ `from` whose element is ≥ `x` (exponential then binary search).
    @inline(__always)
    static func gallop(_ b: UnsafeBufferPointer<UInt32>, from: Int, to x: UInt32) -> Int {
        var lo = from
        if lo >= b.count || b[lo] >= x { return lo }
        var step = 1
        var hi = lo + 1
        while hi < b.count && b[hi] < x {
            lo = hi
            step <<= 1
            hi = lo + step
        }
        if hi > b.count { hi = b.count }
        // b[lo] < x; the answer is in (lo, hi].
        var l = lo + 1
        var h = hi
        while l < h {
            let mid = (l + h) >> 1
            if b[mid] < x { l = mid + 1 } else { h = mid }
        }
        return l
    }

    static func union(_ x: [UInt32], _ y: [UInt32]) -> [UInt32] {
        if x.isEmpty { return y }
        if y.isEmpty { return x }
        var out: [UInt32] = []
        out.reserveCapacity(x.count + y.count)
        var i = 0
        var j = 0
        while i < x.count && j < y.count {
            if x[i] < y[j] { out.append(x[i]); i += 1 }
            else if y[j] < x[i] { out.append(y[j]); j += 1 }
            else { out.append(x[i]); i += 1; j += 1 }
        }
        out.append(contentsOf: x[i...])
        out.append(contentsOf: y[j...])
        return out
    }

    static func difference(_ x: [UInt32], _ y: [UInt32]) -> [UInt32] {
        if y.isEmpty { return x }
        var out: [UInt32] = []
        out.reserveCapacity(x.count)
        y.withUnsafeBufferPointer { b in
            var j = 0
            for v in x {
                j = gallop(b, from: j, to: v)
                if j < b.count && b[j] == v { continue }
                out.append(v)
            }
        }
        return out
    }

    // MARK: - Leaves and units

    mutating func leafList(_ l: Int) throws -> PostingList {
        if let p = leafLists[l] { return p }
        let key = query.leaves[l]
        let withPositions = needsPositions[l]
        var lists: [PostingList]
        switch key.leaf {
        case .term(let t):
            lists = [try reader.postings(forTerm: t, positions: withPositions)]
        case .prefix(let ps):
            lists = []
            for p in ps { lists.append(contentsOf: try reader.postings(forPrefix: p, positions: withPositions)) }
        }
        var list: PostingList
        if lists.count == 1 {
            list = lists[0]
        } else {
            // Several terms share the prefix: a document's occurrences are the sum of theirs
            // (one token has one term, so positions never collide).
            var merged = lists.isEmpty ? PostingList(hasPositions: withPositions) : lists[0]
            for next in lists.dropFirst() { merged = try Self.merge(merged, next) }
            list = merged
        }
        if let c = key.column { list = try Self.restrict(list, toColumn: c) }
        leafLists[l] = list
        return list
    }

    /// The union of two lists; a document in both sums frequencies and merges positions.
    static func merge(_ a: PostingList, _ b: PostingList) throws -> PostingList {
        var out = PostingList(hasPositions: a.hasPositions && b.hasPositions)
        out.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if j >= b.count || (i < a.count && a.documents[i] < b.documents[j]) {
                a.withPositions(at: i) { out.append(document: a.documents[i], frequency: a.frequencies[i], length: a.lengths[i], positions: $0) }
                i += 1
            } else if i >= a.count || b.documents[j] < a.documents[i] {
                b.withPositions(at: j) { out.append(document: b.documents[j], frequency: b.frequencies[j], length: b.lengths[j], positions: $0) }
                j += 1
            } else {
                var byColumn: [Int: [UInt32]] = [:]
                for c in try a.positions(at: i) + b.positions(at: j) { byColumn[c.column, default: []].append(contentsOf: c.positions) }
                let cols = byColumn.keys.sorted().map { FullTextColumnPositions(column: $0, positions: Array(Set(byColumn[$0]!)).sorted()) }
                let encoded = FullTextPostingsCodec.encodePositions(cols)
                encoded.withUnsafeBytes {
                    out.append(document: a.documents[i], frequency: a.frequencies[i] + b.frequencies[j], length: a.lengths[i], positions: $0)
                }
                i += 1
                j += 1
            }
        }
        return out
    }

    /// The list limited to one column: frequencies count only that column's positions.
    static func restrict(_ list: PostingList, toColumn column: Int) throws -> PostingList {
        var out = PostingList(hasPositions: true)
        for i in 0..<list.count {
            guard let c = try list.positions(at: i).first(where: { $0.column == column }), !c.positions.isEmpty else { continue }
            let encoded = FullTextPostingsCodec.encodePositions([c])
            encoded.withUnsafeBytes {
                out.append(document: list.documents[i], frequency: UInt32(c.positions.count), length: list.lengths[i], positions: $0)
            }
        }
        return out
    }

    mutating func unitList(_ u: Int) throws -> UnitList {
        if let h = unitLists[u] { return h }
        let unit = query.units[u]
        var result = UnitList()
        if unit.parts.count == 1 {
            let l = try leafList(unit.parts[0].leaf)
            result = UnitList(documents: l.documents, frequencies: l.frequencies, lengths: l.lengths)
        } else {
            var lists: [PostingList] = []
            for part in unit.parts { lists.append(try leafList(part.leaf)) }
            let matcher = PhraseMatcher(offsets: unit.parts.map(\.offset))
            if lists.count == 2 {
                result = try Self.phrase2(lists[0], lists[1], matcher)
            } else {
                // A word repeated in the phrase is intersected and decoded once per document.
                let leaves = unit.parts.map(\.leaf)
                let firstOfLeaf = leaves.indices.map { k in leaves.firstIndex(of: leaves[k])! }
                let distinct = lists.indices.filter { firstOfLeaf[$0] == $0 }
                let order = distinct.sorted { lists[$0].count < lists[$1].count }
                var candidates = lists[order[0]].documents
                for k in order.dropFirst() { candidates = Self.intersect(candidates, lists[k].documents) }
                var cursors = [Int](repeating: 0, count: lists.count)
                for d in candidates {
                    // Every part holds d: find its entry (lists and candidates both ascend).
                    var length: UInt32 = 0
                    for k in lists.indices {
                        if firstOfLeaf[k] != k {
                            matcher.copy(part: k, from: firstOfLeaf[k])
                            continue
                        }
                        let idx = lists[k].documents.withUnsafeBufferPointer { Self.gallop($0, from: cursors[k], to: d) }
                        cursors[k] = idx
                        try lists[k].withPositions(at: idx) { try matcher.decode(part: k, $0) }
                        length = lists[k].lengths[idx]
                    }
                    let f = matcher.count()
                    if f > 0 {
                        result.documents.append(d)
                        result.frequencies.append(UInt32(f))
                        result.lengths.append(length)
                    }
                }
            }
        }
        unitLists[u] = result
        return result
    }

    /// A two-word phrase: intersects the lists by galloping from whichever side is behind and
    /// checks positions in the documents both hold.
    static func phrase2(_ a: PostingList, _ b: PostingList, _ matcher: PhraseMatcher) throws -> UnitList {
        var result = UnitList()
        guard a.hasPositions && b.hasPositions else { return result }
        try a.documents.withUnsafeBufferPointer { da in
            try b.documents.withUnsafeBufferPointer { db in
                try a.positionRefs.withUnsafeBufferPointer { pa in
                    try b.positionRefs.withUnsafeBufferPointer { pb in
                        try a.lengths.withUnsafeBufferPointer { la in
                            var i = 0
                            var j = 0
                            while i < da.count && j < db.count {
                                let x = da[i], y = db[j]
                                if x < y {
                                    i = gallop(da, from: i, to: y)
                                } else if y < x {
                                    j = gallop(db, from: j, to: x)
                                } else {
                                    let f = try matcher.countPair(pa[i], pb[j])
                                    if f > 0 {
                                        result.documents.append(x)
                                        result.frequencies.append(UInt32(f))
                                        result.lengths.append(la[i])
                                    }
                                    i += 1
                                    j += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        return result
    }

    /// The occurrences of unit `u` in document `d` (which holds the unit).
    mutating func instances(ofUnit u: Int, document d: UInt32) throws -> [UnitInstance] {
        let unit = query.units[u]
        let matcher = PhraseMatcher(offsets: unit.parts.map(\.offset))
        for (k, part) in unit.parts.enumerated() {
            let list = try leafList(part.leaf)
            guard let idx = list.index(of: d) else { return [] }
            try list.withPositions(at: idx) { try matcher.decode(part: k, $0) }
        }
        var out: [UnitInstance] = []
        _ = matcher.count { column, start in out.append(UnitInstance(column: column, start: start, end: start + unit.span)) }
        return out
    }

    // MARK: - NEAR

    mutating func near(_ us: [Int], _ ds: [Int]) throws -> [UInt32] {
        var lists: [UnitList] = []
        for u in us { lists.append(try unitList(u)) }
        lists.sort { $0.documents.count < $1.documents.count }
        var candidates = lists[0].documents
        for l in lists.dropFirst() { candidates = Self.intersect(candidates, l.documents) }
        var result: [UInt32] = []
        for d in candidates {
            var instances: [[UnitInstance]] = []
            for u in us { instances.append(try self.instances(ofUnit: u, document: d)) }
            if Self.nearChainExists(instances, ds) { result.append(d) }
        }
        return result
    }

    /// True if, in one column, there are instances x₀ … xₙ of the operands with xᵢ and xᵢ₊₁
    /// disjoint and at most dᵢ positions apart (in either order).
    static func nearChainExists(_ instances: [[UnitInstance]], _ ds: [Int]) -> Bool {
        let columns = Set(instances[0].map(\.column))
        for column in columns {
            var survivors = instances[0].filter { $0.column == column }
            for k in 1..<instances.count {
                let limit = ds[k - 1]
                survivors = instances[k].filter { x in
                    x.column == column && survivors.contains { y in
                        let gap: Int
                        if y.end < x.start {
                            gap = x.start - y.end - 1
                        } else if x.end < y.start {
                            gap = y.start - x.end - 1
                        } else {
                            return false
                        }
                        return gap <= limit
                    }
                }
                if survivors.isEmpty { break }
            }
            if !survivors.isEmpty { return true }
        }
        return false
    }
}
