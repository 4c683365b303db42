import ObjectGraph
import PostgresNIO

/// A statement's bound values, and how each reads in the SQL trace while statements are traced
/// (``ObjectGraphLogging``): postgres-nio's own bindings print every value as `****`, so the store keeps its own
/// rendering, made only while the trace is on.
struct StatementBindings: Sendable {
    private(set) var bindings: PostgresBindings
    /// The values as the trace shows them; nil while statements are not traced.
    private(set) var shown: [String]?

    init(capacity: Int = 0) {
        bindings = PostgresBindings(capacity: capacity)
        shown = ObjectGraphLogging.tracesSQL ? [] : nil
    }

    var count: Int { bindings.count }

    mutating func append<Value: PostgresDynamicTypeEncodable>(_ value: Value) {
        bindings.append(value)
        shown?.append(Self.shown(value))
    }

    mutating func append<Value: PostgresDynamicTypeEncodable>(_ value: Value?) {
        bindings.append(value)
        if let value { shown?.append(Self.shown(value)) } else { shown?.append("NULL") }
    }

    mutating func appendNull() {
        bindings.appendNull()
        shown?.append("NULL")
    }

    /// A value as the trace shows it: text quoted, and long values cut, so that one row of a large import does not
    /// fill the log.
    private static func shown(_ value: some Any) -> String {
        let text = value is String ? String(reflecting: value) : String(describing: value)
        return text.count > 120 ? text.prefix(120) + "…" : text
    }
}
