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
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        default: self == other
        }
    }
}
