#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The documents matching a full-text query, each with its rank.
public struct FullTextMatches<DocKey: Hashable> {
    /// Matching documents → rank (BM25, ≥ 0, larger = more relevant; 0 when evaluated
    /// without ranking).
    public var ranks: [DocKey: Double]

    /// Creates a match set.
    public init(ranks: [DocKey: Double]) {
        self.ranks = ranks
    }

    /// The number of matching documents.
    public var count: Int { ranks.count }

    /// True if no document matches.
    public var isEmpty: Bool { ranks.isEmpty }

    /// True if `doc` matches.
    public func contains(_ doc: DocKey) -> Bool { ranks[doc] != nil }

    /// The rank of a matching document, nil if it does not match.
    public func rank(of doc: DocKey) -> Double? { ranks[doc] }

    /// The matching documents, unordered.
    public var documents: Dictionary<DocKey, Double>.Keys { ranks.keys }
}

extension FullTextMatches: Sendable where DocKey: Sendable {}

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
    ///   - ranking: When false, skips scoring (no document-length reads); every rank is 0.
    /// - Returns: The matching documents with their ranks.
    /// - Throws: Whatever the reader throws.
    public func evaluate<R: PostingsReader>(in reader: R, ranking: Bool = true) throws -> FullTextMatches<R.DocKey> {
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

/// A unit's occurrences in one document.
struct UnitHit {
    var frequency: Int
    var instances: [UnitInstance]
}

/// Evaluates one compiled query over one reader.
struct FullTextEvaluator<R: PostingsReader> {
    typealias DocKey = R.DocKey
    typealias Node = CompiledFullTextQuery.Node

    let query: CompiledFullTextQuery
    let reader: R
    /// Per leaf: document → positions per column (columns ascending, positions ascending).
    var leafPostings: [[DocKey: [FullTextColumnPositions]]?]
    /// Per unit: document → occurrences.
    var unitHits: [[DocKey: UnitHit]?]

    init(query: CompiledFullTextQuery, reader: R) {
        self.query = query
        self.reader = reader
        leafPostings = Array(repeating: nil, count: query.leaves.count)
        unitHits = Array(repeating: nil, count: query.units.count)
    }

    mutating func run(ranking: Bool) throws -> FullTextMatches<DocKey> {
        if query.isEmpty { return FullTextMatches(ranks: [:]) }
        let docs = try evaluate(query.root)
        var ranks: [DocKey: Double] = [:]
        ranks.reserveCapacity(docs.count)
        guard ranking, !docs.isEmpty else {
            for d in docs { ranks[d] = 0 }
            return FullTextMatches(ranks: ranks)
        }
        var positive: [Int] = []
        collectPositiveUnits(query.root, into: &positive)
        let stats = try reader.corpusStatistics()
        let avgdl = stats.averageDocumentLength > 0 ? stats.averageDocumentLength : 1
        let k1 = FullTextSearch.bm25K1
        let b = FullTextSearch.bm25B
        var lengths: [DocKey: Double] = [:]
        lengths.reserveCapacity(docs.count)
        for d in docs {
            lengths[d] = Double(try reader.documentLength(d))
            ranks[d] = 0
        }
        for u in positive {
            let hits = try hits(ofUnit: u)
            let df = Double(hits.count)
            let n = max(Double(stats.documentCount), df, 1)
            let idf = log(1 + (n - df + 0.5) / (df + 0.5))
            for d in docs {
                guard let h = hits[d], h.frequency > 0 else { continue }
                let f = Double(h.frequency)
                let norm = k1 * (1 - b + b * lengths[d]! / avgdl)
                ranks[d]! += idf * f * (k1 + 1) / (f + norm)
            }
        }
        return FullTextMatches(ranks: ranks)
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

    mutating func evaluate(_ n: Node) throws -> Set<DocKey> {
        switch n {
        case .empty, .never:
            return []
        case .unit(let u):
            return Set(try hits(ofUnit: u).keys)
        case .near(let us, let ds):
            return try near(us, ds)
        case .and(let xs):
            var sets = try xs.map { try evaluate($0) }
            sets.sort { $0.count < $1.count }
            var result = sets[0]
            for s in sets.dropFirst() {
                if result.isEmpty { break }
                result.formIntersection(s)
            }
            return result
        case .or(let xs):
            var result = Set<DocKey>()
            for x in xs { result.formUnion(try evaluate(x)) }
            return result
        case .not(let a, let b):
            let left = try evaluate(a)
            if left.isEmpty { return left }
            return left.subtracting(try evaluate(b))
        }
    }

    // MARK: - Leaves and units

    mutating func postings(ofLeaf l: Int) throws -> [DocKey: [FullTextColumnPositions]] {
        if let p = leafPostings[l] { return p }
        let key = query.leaves[l]
        var raw: [Posting<DocKey>]
        switch key.leaf {
        case .term(let t):
            raw = try reader.postings(forTerm: t, column: key.column)
        case .prefix(let ps):
            raw = []
            for p in ps { raw.append(contentsOf: try reader.postings(forPrefix: p, column: key.column)) }
        }
        var byDoc: [DocKey: [FullTextColumnPositions]] = [:]
        for p in raw where !p.positions.isEmpty && (key.column == nil || key.column == p.column) {
            byDoc[p.doc, default: []].append(FullTextColumnPositions(column: p.column, positions: p.positions))
        }
        // Several terms of a prefix may share a document and column: merge their positions.
        if case .prefix = key.leaf {
            for (d, cols) in byDoc where cols.count > 1 {
                byDoc[d] = Self.merged(cols)
            }
        }
        leafPostings[l] = byDoc
        return byDoc
    }

    static func merged(_ cols: [FullTextColumnPositions]) -> [FullTextColumnPositions] {
        var byColumn: [Int: [UInt32]] = [:]
        for c in cols { byColumn[c.column, default: []].append(contentsOf: c.positions) }
        return byColumn.keys.sorted().map { FullTextColumnPositions(column: $0, positions: Array(Set(byColumn[$0]!)).sorted()) }
    }

    mutating func hits(ofUnit u: Int) throws -> [DocKey: UnitHit] {
        if let h = unitHits[u] { return h }
        let unit = query.units[u]
        var result: [DocKey: UnitHit] = [:]
        if unit.parts.count == 1 {
            for (d, cols) in try postings(ofLeaf: unit.parts[0].leaf) {
                var hit = UnitHit(frequency: 0, instances: [])
                for c in cols {
                    hit.frequency += c.positions.count
                    for p in c.positions { hit.instances.append(UnitInstance(column: c.column, start: Int(p), end: Int(p))) }
                }
                result[d] = hit
            }
        } else {
            var lists: [[DocKey: [FullTextColumnPositions]]] = []
            for part in unit.parts { lists.append(try postings(ofLeaf: part.leaf)) }
            // Walk the rarest part's documents; check the others by position arithmetic.
            let rarest = lists.indices.min { lists[$0].count < lists[$1].count }!
            let span = unit.span
            docs: for d in lists[rarest].keys {
                var perPart: [[FullTextColumnPositions]] = []
                for l in lists {
                    guard let cols = l[d] else { continue docs }
                    perPart.append(cols)
                }
                var hit = UnitHit(frequency: 0, instances: [])
                for first in perPart[0] {
                    var others: [[UInt32]] = []
                    for k in 1..<perPart.count {
                        guard let c = perPart[k].first(where: { $0.column == first.column }) else { break }
                        others.append(c.positions)
                    }
                    guard others.count == perPart.count - 1 else { continue }
                    positions: for p in first.positions {
                        for k in 1..<perPart.count {
                            let want = Int(p) + unit.parts[k].offset
                            guard want <= Int(UInt32.max), Self.contains(others[k - 1], UInt32(want)) else {
                                continue positions
                            }
                        }
                        hit.frequency += 1
                        hit.instances.append(UnitInstance(column: first.column, start: Int(p), end: Int(p) + span))
                    }
                }
                if hit.frequency > 0 { result[d] = hit }
            }
        }
        unitHits[u] = result
        return result
    }

    /// Binary search in ascending positions.
    static func contains(_ a: [UInt32], _ x: UInt32) -> Bool {
        var lo = 0
        var hi = a.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if a[mid] < x { lo = mid + 1 } else { hi = mid }
        }
        return lo < a.count && a[lo] == x
    }

    // MARK: - NEAR

    mutating func near(_ us: [Int], _ ds: [Int]) throws -> Set<DocKey> {
        var hitLists: [[DocKey: UnitHit]] = []
        for u in us { hitLists.append(try hits(ofUnit: u)) }
        let rarest = hitLists.indices.min { hitLists[$0].count < hitLists[$1].count }!
        var result = Set<DocKey>()
        docs: for d in hitLists[rarest].keys {
            var instances: [[UnitInstance]] = []
            for h in hitLists {
                guard let hit = h[d] else { continue docs }
                instances.append(hit.instances)
            }
            if Self.nearChainExists(instances, ds) { result.insert(d) }
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
