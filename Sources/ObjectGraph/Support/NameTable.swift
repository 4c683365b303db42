/// Values by name, for the handful of names a model has (its entities, its tables): looked up on every fetch,
/// several times on the way down.
///
/// Up to 16 names are compared in turn rather than hashed. A name of up to 15 UTF-8 bytes is stored inline in its
/// `String`, so equal names compare as two words and different ones by their few bytes, where hashing runs the
/// general hasher's code and probes a table's memory: what a screen's small query pays for most when it runs beside
/// an import, with cold caches.
struct NameTable<Value>: Sequence {
    private let names: [String]
    private let values: [Value]
    /// Beyond ``linearLimit`` names, a dictionary.
    private let byName: [String: Value]?

    static var linearLimit: Int { 16 }

    /// A table of `pairs`, whose names are unique.
    init(_ pairs: [(name: String, value: Value)]) {
        names = pairs.map(\.name)
        values = pairs.map(\.value)
        byName = pairs.count > Self.linearLimit ? Dictionary(uniqueKeysWithValues: pairs.map { ($0.name, $0.value) }) : nil
    }

    /// The value named `name`, or nil.
    subscript(name: String) -> Value? {
        if let byName { return byName[name] }
        for index in names.indices where names[index] == name { return values[index] }
        return nil
    }

    /// The values, in the order they were given.
    func makeIterator() -> IndexingIterator<[Value]> { values.makeIterator() }
}

extension NameTable: Sendable where Value: Sendable {}
