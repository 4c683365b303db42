/// The results of one benchmark run: rows of medians, printed as a table with ratios to raw SQLite and, where a
/// workload has a target, whether this run met it.
public struct BenchmarkReport: Sendable {
    public struct Row: Sendable {
        public var workload: String
        public var unit: String
        /// Values by contender: "raw", "GRDB rows", "GRDB records", "ObjectGraph".
        public var values: [String: Double]
        public var note: String = ""
        /// What ObjectGraph's value should meet, if anything.
        public var target: BenchmarkTarget?

        package init(workload: String, unit: String, values: [String: Double], note: String = "", target: BenchmarkTarget? = nil) {
            (self.workload, self.unit, self.values, self.note, self.target) = (workload, unit, values, note, target)
        }
    }

    public var rows: [Row] = []

    package init(rows: [Row] = []) { self.rows = rows }
    public static let contenders = ["raw", "GRDB rows", "GRDB records", "ObjectGraph"]

    /// Whether `row` met its target in this run: nil without a target or without the values it needs.
    public func met(_ row: Row) -> Bool? {
        guard let target = row.target, let graph = row.values["ObjectGraph"] else { return nil }
        switch target {
        case .ratio(let limit):
            guard let raw = row.values["raw"], raw > 0 else { return nil }
            return graph / raw <= limit
        case .aboveRaw(let points):
            guard let raw = row.values["raw"] else { return nil }
            return graph <= raw + points
        case .atMost(let limit):
            return graph <= limit
        case .flat(let reference, let factor):
            guard let base = rows.first(where: { $0.workload == reference })?.values["ObjectGraph"], base > 0 else { return nil }
            return graph <= base * factor
        }
    }

    /// A Markdown table: each contender's median, ObjectGraph's ratio to raw SQLite where raw ran, the target and
    /// whether it was met.
    public func table() -> String {
        var lines = ["| workload | unit | " + Self.contenders.joined(separator: " | ") + " | ObjectGraph / raw | target | met | note |",
                     "|---|---|" + String(repeating: "---|", count: Self.contenders.count) + "---|---|---|---|"]
        for row in rows {
            let cells = Self.contenders.map { row.values[$0].map(Self.format) ?? "" }
            var ratio = ""
            if let raw = row.values["raw"], let graph = row.values["ObjectGraph"], raw > 0 {
                ratio = String(format: "%.2fx", graph / raw)
            }
            let verdict = met(row).map { $0 ? "yes" : "**no**" } ?? ""
            lines.append("| \(row.workload) | \(row.unit) | " + cells.joined(separator: " | ")
                         + " | \(ratio) | \(row.target?.description ?? "") | \(verdict) | \(row.note) |")
        }
        return lines.joined(separator: "\n")
    }

    static func format(_ value: Double) -> String {
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 1 { return String(format: "%.2f", value) }
        return String(format: "%.3f", value)
    }
}

/// What a workload's ObjectGraph value should meet.
public enum BenchmarkTarget: Sendable, Hashable, CustomStringConvertible {
    /// At most this many times raw SQLite's value in the same run.
    case ratio(Double)
    /// At most raw SQLite's value plus this many (percentage points, for a busy share).
    case aboveRaw(points: Double)
    /// At most this value, in the row's unit.
    case atMost(Double)
    /// At most `factor` times ObjectGraph's value in the row named `reference` (a per-object cost that stays flat).
    case flat(reference: String, factor: Double)

    public var description: String {
        switch self {
        case .ratio(let limit): "≤ \(BenchmarkReport.format(limit))x raw"
        case .aboveRaw(let points): "≤ raw + \(BenchmarkReport.format(points))"
        case .atMost(let limit): "≤ \(BenchmarkReport.format(limit))"
        case .flat(let reference, let factor): "≤ \(BenchmarkReport.format(factor))x \(reference)"
        }
    }
}
