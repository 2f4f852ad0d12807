// Public entry points of the SQL++ parser.

/// Parses SQL++ for mobile (SPEC §2–§3) into the typed AST.
///
/// The parser reports *syntax* errors only; whatever parses is represented faithfully, and
/// the analyzer reports semantic errors (unknown functions, arity, a CROSS JOIN with ON, …).
/// No input crashes or hangs it: nesting deeper than 256 levels, or a tree taller than 1000
/// nodes, is a syntax error "expression nested too deeply".
///
/// ```swift
/// let stmt = try SQLParser.parseStatement("SELECT name FROM hotels WHERE city = 'Paris'")
/// let expr = try SQLParser.parseExpression("lower(name)")
/// ```
package enum SQLParser {
    /// Parses one SELECT statement (an optional trailing `;` is allowed).
    ///
    /// - Parameter text: The query text.
    /// - Returns: The statement.
    /// - Throws: `QueryError` of kind `.syntax`, with the location and text of the offending token.
    package static func parseStatement(_ text: String) throws(QueryError) -> SelectStatement {
        try typed {
            let p = try Parser(text)
            return try p.statement()
        }
    }

    /// Parses one expression filling the whole text (index definitions, `where` clauses).
    ///
    /// - Parameter text: The expression text.
    /// - Returns: The expression.
    /// - Throws: `QueryError` of kind `.syntax`.
    static func parseExpression(_ text: String) throws(QueryError) -> Expr {
        try typed {
            let p = try Parser(text)
            let e = try p.expression()
            guard p.atEnd else { throw p.unexpected("end of expression") }
            return e
        }
    }

    /// Parses a comma-separated list of one or more expressions filling the whole text (a
    /// value index definition string may hold several).
    ///
    /// - Parameter text: The expressions.
    /// - Returns: The expressions, in order.
    /// - Throws: `QueryError` of kind `.syntax`.
    static func parseExpressionList(_ text: String) throws(QueryError) -> [Expr] {
        try typed {
            let p = try Parser(text)
            var list: [Expr] = []
            repeat {
                list.append(try p.expression())
            } while p.accept(.comma)
            guard p.atEnd else { throw p.unexpected("',' or end of expression") }
            return list
        }
    }

    /// Runs the parser, whose internals throw untyped errors: with typed throws every call
    /// site reserves room for a `QueryError` in its frame, and deep nesting multiplies that.
    private static func typed<T>(_ body: () throws -> T) throws(QueryError) -> T {
        do {
            return try body()
        } catch let e as QueryError {
            throw e
        } catch {
            throw QueryError(.syntax, "\(error)")  // unreachable: the parser throws only QueryError
        }
    }
}
