/// Equality as SQLite sees it, for caches of compiled requests: `==` compares strings by Swift's canonical
/// equivalence, so "é" precomposed and decomposed are equal there, but they are different SQLite values, and a
/// request kept for one must not stand for the other.
extension FormatPredicate {
    /// Whether the two predicates are equal with every string constant compared by its UTF-8 bytes.
    package func isIdentical(to other: FormatPredicate) -> Bool {
        isIdentical(to: other, asShape: false)
    }

    /// Whether this predicate's ``shape`` is identical to `shape` (a shape itself), without building it: what a
    /// cache of work by shape asks of every request it is handed.
    package func hasShape(_ shape: FormatPredicate) -> Bool {
        isIdentical(to: shape, asShape: true)
    }

    /// With `asShape`, each of this tree's constants is compared as its kind's representative.
    fileprivate func isIdentical(to other: FormatPredicate, asShape: Bool) -> Bool {
        switch (self, other) {
        case (.constant(let a), .constant(let b)): a == b
        case (.not(let a), .not(let b)): a.isIdentical(to: b, asShape: asShape)
        case (.and(let a), .and(let b)), (.or(let a), .or(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1, asShape: asShape) }
        case (.comparison(let a), .comparison(let b)):
            a.op == b.op && a.modifier == b.modifier && a.options == b.options && a.left.isIdentical(to: b.left, asShape: asShape)
                && a.right.isIdentical(to: b.right, asShape: asShape)
        default: false
        }
    }
}

extension FormatExpression {
    /// Whether the two expressions are equal with every string constant compared by its UTF-8 bytes.
    package func isIdentical(to other: FormatExpression) -> Bool {
        isIdentical(to: other, asShape: false)
    }

    fileprivate func isIdentical(to other: FormatExpression, asShape: Bool) -> Bool {
        func same(_ a: FormatExpression, _ b: FormatExpression) -> Bool { a.isIdentical(to: b, asShape: asShape) }
        switch (self, other) {
        case (.constant(let a), .constant(let b)): return (asShape ? a.kindRepresentative : a).isIdentical(to: b)
        case (.aggregate(let a), .aggregate(let b)): return a.count == b.count && zip(a, b).allSatisfy(same)
        case (.member(let a, let aPath), .member(let b, let bPath)): return aPath == bPath && same(a, b)
        case (.collection(let aOperator, let a, let aKey), .collection(let bOperator, let b, let bKey)):
            return aOperator == bOperator && aKey == bKey && same(a, b)
        case (.subquery(let aCollection, let aVariable, let aPredicate), .subquery(let bCollection, let bVariable, let bPredicate)):
            return aVariable == bVariable && same(aCollection, bCollection) && aPredicate.isIdentical(to: bPredicate, asShape: asShape)
        case (.function(let aFunction, let a), .function(let bFunction, let b)):
            return aFunction == bFunction && a.count == b.count && zip(a, b).allSatisfy(same)
        case (.subscripted(let a, .index(let aIndex)), .subscripted(let b, .index(let bIndex))):
            return same(a, b) && same(aIndex, bIndex)
        case (.subscripted(let a, let aPosition), .subscripted(let b, let bPosition)):
            return aPosition == bPosition && same(a, b)
        case (.ternary(let aCondition, let aThen, let aElse), .ternary(let bCondition, let bThen, let bElse)):
            return aCondition.isIdentical(to: bCondition, asShape: asShape) && same(aThen, bThen) && same(aElse, bElse)
        default:
            // Key paths, variables and SELF hold no constant; different kinds are never equal.
            return self == other
        }
    }
}

extension PredicateValue {
    /// Whether the two values are equal with strings compared by their UTF-8 bytes.
    package func isIdentical(to other: PredicateValue) -> Bool {
        switch (self, other) {
        case (.string(let a), .string(let b)): a.hasSameUTF8(as: b)
        default: self == other
        }
    }
}

/// The hash the request caches choose slots by, fed so that identical values and trees (``isIdentical(to:)``) feed
/// equal words: strings by their bytes.
extension FNV1a {
    /// Equal values (strings by their bytes) feed equal words.
    package mutating func combine(_ value: PredicateValue) {
        switch value {
        case .null: combine(byte: 0)
        case .bool(let v): combine(byte: v ? 1 : 2)
        case .int(let v): combine(byte: 3); combine(UInt64(bitPattern: v))
        case .double(let v): combine(byte: 4); combine((v == 0 ? 0 : v).bitPattern)  // -0.0 == 0.0
        case .string(let v): combine(byte: 5); combine(bytesOf: v)
        default: combine(byte: 6); combine(UInt64(bitPattern: Int64(value.hashValue)))
        }
    }

    /// Feeds what tells predicates apart: their operators, key paths and constants. Rarer expressions feed only
    /// their kind (equal predicates still feed equal words; different ones that feed the same merely share a slot).
    ///
    /// With `asShape`, each constant feeds its kind's representative: the words `predicate.shape` would feed,
    /// without building it.
    package mutating func combine(_ predicate: FormatPredicate, asShape: Bool = false) {
        switch predicate {
        case .constant(let value): combine(byte: value ? 1 : 2)
        case .not(let inner): combine(byte: 3); combine(inner, asShape: asShape)
        case .and(let parts): combine(byte: 4); for part in parts { combine(part, asShape: asShape) }
        case .or(let parts): combine(byte: 5); for part in parts { combine(part, asShape: asShape) }
        case .comparison(let comparison):
            combine(byte: 6)
            combine(comparison.left, asShape: asShape)
            combine(bytesOf: comparison.op.rawValue)
            combine(bytesOf: comparison.modifier.rawValue)
            combine(UInt64(truncatingIfNeeded: comparison.options.rawValue))
            combine(comparison.right, asShape: asShape)
        }
    }

    package mutating func combine(_ expression: FormatExpression, asShape: Bool = false) {
        switch expression {
        case .constant(let value): combine(byte: 1); combine(asShape ? value.kindRepresentative : value)
        case .keyPath(let path): combine(byte: 2); for key in path { combine(bytesOf: key) }
        case .variable(let name): combine(byte: 3); combine(bytesOf: name)
        case .evaluatedObject: combine(byte: 4)
        case .member: combine(byte: 5)
        case .aggregate(let items): combine(byte: 6); combine(UInt64(items.count))
        case .collection: combine(byte: 7)
        case .subquery: combine(byte: 8)
        case .function(let function, let arguments):
            combine(byte: 9)
            combine(bytesOf: function.rawValue)
            for argument in arguments { combine(argument, asShape: asShape) }
        case .subscripted: combine(byte: 10)
        case .ternary: combine(byte: 11)
        }
    }
}
