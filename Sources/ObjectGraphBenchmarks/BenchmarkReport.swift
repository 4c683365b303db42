/// The results of one benchmark run: rows of medians, printed as a table with ratios to raw SQLite.
public struct BenchmarkReport: Sendable {
    public struct Row: Sendable {
        public var workload: String
        public var unit: String
        /// Values by contender: "raw", "GRDB rows", "GRDB records", "ObjectGraph".
        public var values: [String: Double]
        public var note: String = ""
    }

    public var rows: [Row] = []
    public static let contenders = ["raw", "GRDB rows", "GRDB records", "ObjectGraph"]

    /// A Markdown table: each contender's median and, where raw SQLite ran, its ratio to raw.
    public func table() -> String {
        var lines = ["| workload | unit | " + Self.contenders.joined(separator: " | ") + " | ObjectGraph / raw | note |",
                     "|---|---|" + String(repeating: "---|", count: Self.contenders.count) + "---|---|"]
        for row in rows {
            let cells = Self.contenders.map { row.values[$0].map(Self.format) ?? "" }
            var ratio = ""
            if let raw = row.values["raw"], let graph = row.values["ObjectGraph"], raw > 0 {
                ratio = String(format: "%.2fx", graph / raw)
            }
            lines.append("| \(row.workload) | \(row.unit) | " + cells.joined(separator: " | ") + " | \(ratio) | \(row.note) |")
        }
        return lines.joined(separator: "\n")
    }

    static func format(_ value: Double) -> String {
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 1 { return String(format: "%.2f", value) }
        return String(format: "%.3f", value)
    }
}
