/// The results of one benchmark run: rows of medians, printed as a table with ratios to raw SQLite and, where a
/// workload has a target, whether this run met it.
public struct BenchmarkReport: Sendable {
    public struct Row: Sendable {
        public var workload: String
        public var unit: String
        /// Values by contender: "raw", "GRDB rows", "GRDB records", "ObjectGraph", and where they ran the object baseline
        /// (``BenchmarkReport/objectBaseline``) and a peer.
        public var values: [String: Double]
        public var note: String = ""
        /// What ObjectGraph's value should meet, if anything.
        public var target: BenchmarkTarget?
        /// Whether ObjectGraph's value should also be below a peer's (Fluent's), where the peer ran.
        public var fasterThanPeer: String?

        package init(workload: String, unit: String, values: [String: Double], note: String = "", target: BenchmarkTarget? = nil) {
            (self.workload, self.unit, self.values, self.note, self.target) = (workload, unit, values, note, target)
        }

        /// Two rows for one measure: its median wall time, and its median CPU time (every thread of the process,
        /// user and system) named `label` + " CPU", each judged against its target (`cpuTarget` defaults to `target`).
        /// Where ObjectGraph's work ran on a context's queue, the CPU row's note splits its CPU time by thread: that
        /// queue's, and the rest (a large fetch reads ahead on a thread of its own); `workThread` names the first
        /// where the work ran elsewhere.
        package static func wallAndCPU(_ label: String, _ samples: Samples, note: String = "", target: BenchmarkTarget? = nil,
                                       cpuTarget: BenchmarkTarget? = nil, cpuNote: String? = nil, workThread: String = "its context's thread") -> [Row] {
            var cpuNote = cpuNote ?? note
            if let split = samples.threadSplit(of: "ObjectGraph"), split.others >= 0.0005 {
                cpuNote += (cpuNote.isEmpty ? "" : "; ") + "ObjectGraph: \(BenchmarkReport.format(split.work)) s on \(workThread), \(BenchmarkReport.format(split.others)) s on others"
            }
            return [Row(workload: label, unit: "s", values: samples.wall, note: note, target: target),
                    Row(workload: "\(label) CPU", unit: "s", values: samples.cpu, note: cpuNote, target: cpuTarget ?? target)]
        }
    }

    public var rows: [Row] = []

    package init(rows: [Row] = []) { self.rows = rows }
    /// The contenders of this package, always given a column.
    public static let contenders = ["raw", "GRDB rows", "GRDB records", "ObjectGraph"]
    /// The contender that makes an object per row from raw SQLite's reads, the plain way, and does nothing else
    /// (see `RawSQLite.readAllAsObjects(table:)`): what handing out objects costs before anything an object graph
    /// adds. It runs where objects are read (W2, W11); its column follows raw SQLite's where it ran, and a row's note
    /// gives ObjectGraph's ratio to it.
    public static let objectBaseline = "raw objects"
    /// The object baseline made with ObjectGraph's own way of reading a large fetch: past 2,048 rows a second thread
    /// steps SQLite and decodes the rows while the caller makes the objects. Where ObjectGraph reads faster than the
    /// plain way, this keeps the limit a limit: an object target is judged against the faster of the two.
    public static let objectBaselineReadAhead = "raw objects, read ahead"
    /// The object baselines, in their columns' order.
    public static let objectBaselines = [objectBaseline, objectBaselineReadAhead]
    /// The columns of the table: ``contenders`` (with the object baselines after raw SQLite where they ran), then any
    /// peer (``PeerContender``) whose values a row holds.
    public var columns: [String] {
        let ran = Set(rows.flatMap(\.values.keys))
        var columns = Self.contenders
        columns.insert(contentsOf: Self.objectBaselines.filter(ran.contains), at: 1)
        return columns + ran.subtracting(columns).sorted()
    }

    /// What an object target is judged against in `row`: the faster of the object baselines that ran.
    static func objectLimit(_ row: Row) -> Double? {
        objectBaselines.compactMap { row.values[$0] }.filter { $0 > 0 }.min()
    }

    /// Whether `row` met its target and, where a peer ran it, was faster than the peer: nil when there is nothing
    /// to judge, or not the values to judge it.
    public func met(_ row: Row) -> Bool? {
        let verdicts = [metTarget(row), row.fasterThanPeer.flatMap { peer in
            row.values[peer].flatMap { peerValue in row.values["ObjectGraph"].map { $0 < peerValue } }
        }].compactMap { $0 }
        return verdicts.isEmpty ? nil : !verdicts.contains(false)
    }

    private func metTarget(_ row: Row) -> Bool? {
        guard let target = row.target, let graph = row.values["ObjectGraph"] else { return nil }
        switch target {
        case .ratio(let limit):
            guard let raw = row.values["raw"], raw > 0 else { return nil }
            return graph / raw <= limit
        case .ratioToObjects(let limit):
            guard let objects = Self.objectLimit(row) else { return nil }
            return graph / objects <= limit
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
        let columns = columns
        var lines = ["| workload | unit | " + columns.joined(separator: " | ") + " | ObjectGraph / raw | target | met | note |",
                     "|---|---|" + String(repeating: "---|", count: columns.count) + "---|---|---|---|"]
        for row in rows {
            let cells = columns.map { row.values[$0].map(Self.format) ?? "" }
            var ratio = ""
            if let raw = row.values["raw"], let graph = row.values["ObjectGraph"], raw > 0 {
                ratio = String(format: "%.2fx", graph / raw)
            }
            let verdict = met(row).map { $0 ? "yes" : "**no**" } ?? ""
            let targets = [row.target?.description, row.fasterThanPeer.map { "< \($0)" }].compactMap { $0 }
            var note = row.note
            for baseline in Self.objectBaselines {
                if let value = row.values[baseline], let graph = row.values["ObjectGraph"], value > 0 {
                    note += (note.isEmpty ? "" : "; ") + "ObjectGraph / \(baseline): " + String(format: "%.2fx", graph / value)
                }
            }
            lines.append("| \(row.workload) | \(row.unit) | " + cells.joined(separator: " | ")
                         + " | \(ratio) | \(targets.joined(separator: ", ")) | \(verdict) | \(note) |")
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
    /// At most this many times the object baseline's value in the same run (``BenchmarkReport/objectBaseline``, or
    /// ``BenchmarkReport/objectBaselineReadAhead`` where that is faster): the limit where objects are read is what
    /// making a plain object per row costs.
    case ratioToObjects(Double)
    /// At most raw SQLite's value plus this many (percentage points, for a busy share).
    case aboveRaw(points: Double)
    /// At most this value, in the row's unit.
    case atMost(Double)
    /// At most `factor` times ObjectGraph's value in the row named `reference` (a per-object cost that stays flat).
    case flat(reference: String, factor: Double)

    public var description: String {
        switch self {
        case .ratio(let limit): "≤ \(BenchmarkReport.format(limit))x raw"
        case .ratioToObjects(let limit): "≤ \(BenchmarkReport.format(limit))x \(BenchmarkReport.objectBaseline)"
        case .aboveRaw(let points): "≤ raw + \(BenchmarkReport.format(points))"
        case .atMost(let limit): "≤ \(BenchmarkReport.format(limit))"
        case .flat(let reference, let factor): "≤ \(BenchmarkReport.format(factor))x \(reference)"
        }
    }
}
