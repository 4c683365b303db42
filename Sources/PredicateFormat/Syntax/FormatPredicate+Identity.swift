/// Equality as SQLite sees it, for caches of compiled requests: `==` compares strings by Swift's canonical
/// equivalence, so "é" precomposed and decomposed are equal there, but they are different SQLite values, and a
/// request kept for one must not stand for the other.
extension FormatPredicate {
    /// Whether the two predicates are equal with every string constant compared by its UTF-8 bytes.
    package func isIdentical(to other: FormatPredicate) -> Bool {
        switch (self, other) {
        case (.constant(let a), .constant(let b)): a == b
        case (.not(let a), .not(let b)): a.isIdentical(to: b)
        case (.and(let a), .and(let b)), (.or(let a), .or(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.comparison(let a), .comparison(let b)):
            a.op == b.op && a.modifier == b.modifier && a.options == b.options && a.left.isIdentical(to: b.left)
                && a.right.isIdentical(to: b.right)
        default: false
        }
    }
}

extension FormatExpression {
    /// Whether the two expressions are equal with every string constant compared by its UTF-8 bytes.
    package func isIdentical(to other: FormatExpression) -> Bool {
        switch (self, other) {
        case (.constant(let a), .constant(let b)): a.isIdentical(to: b)
        case (.aggregate(let a), .aggregate(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.member(let a, let aPath), .member(let b, let bPath)): aPath == bPath && a.isIdentical(to: b)
        case (.collection(let aOperator, let a, let aKey), .collection(let bOperator, let b, let bKey)):
            aOperator == bOperator && aKey == bKey && a.isIdentical(to: b)
        case (.subquery(let aCollection, let aVariable, let aPredicate), .subquery(let bCollection, let bVariable, let bPredicate)):
            aVariable == bVariable && aCollection.isIdentical(to: bCollection) && aPredicate.isIdentical(to: bPredicate)
        case (.function(let aFunction, let a), .function(let bFunction, let b)):
            aFunction == bFunction && a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.subscripted(let a, .index(let aIndex)), .subscripted(let b, .index(let bIndex))):
            a.isIdentical(to: b) && aIndex.isIdentical(to: bIndex)
        case (.subscripted(let a, let aPosition), .subscripted(let b, let bPosition)):
            aPosition == bPosition && a.isIdentical(to: b)
        case (.ternary(let aCondition, let aThen, let aElse), .ternary(let bCondition, let bThen, let bElse)):
            aCondition.isIdentical(to: bCondition) && aThen.isIdentical(to: bThen) && aElse.isIdentical(to: bElse)
        default:
            // Key paths, variables and SELF hold no constant; different kinds are never equal.
            self == other
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
    package mutating func combine(_ predicate: FormatPredicate) {
        switch predicate {
        case .constant(let value): combine(byte: value ? 1 : 2)
        case .not(let inner): combine(byte: 3); combine(inner)
        case .and(let parts): combine(byte: 4); for part in parts { combine(part) }
        case .or(let parts): combine(byte: 5); for part in parts { combine(part) }
        case .comparison(let comparison):
            combine(byte: 6)
            combine(comparison.left)
            combine(bytesOf: comparison.op.rawValue)
            combine(bytesOf: comparison.modifier.rawValue)
            combine(UInt64(truncatingIfNeeded: comparison.options.rawValue))
            combine(comparison.right)
        }
    }

    package mutating func combine(_ expression: FormatExpression) {
        switch expression {
        case .constant(let value): combine(byte: 1); combine(value)
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
            for argument in arguments { combine(argument) }
        case .subscripted: combine(byte: 10)
        case .ternary: combine(byte: 11)
        }
    }
}
