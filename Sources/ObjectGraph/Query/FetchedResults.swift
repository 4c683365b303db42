/// The results of ``ObjectContext/fetchResults(_:)``: every matching ID up front, objects loaded a batch at a time.
///
/// Only the batch being read is held; earlier batches are released (objects the app keeps stay alive, and those
/// with unsaved changes stay registered). Like the objects it yields, it belongs to its context's queue.
///
/// ```swift
/// var request = FetchRequest(entityName: "Book")
/// request.fetchBatchSize = 1_000
/// for book in try ctx.fetchResults(request) { total += try book.value(forKey: "pages") ... }
/// ```
public final class FetchedResults<Element: ManagedObject>: RandomAccessCollection {
    /// The IDs of every result, in order.
    public let ids: [ObjectID]
    let batchSize: Int
    let prefetching: [String]
    private let state: ContextState
    private var batchIndex = -1
    private var batch: [ManagedObject] = []

    init(ids: [ObjectID], batchSize: Int, prefetching: [String], state: ContextState) {
        self.ids = ids
        self.batchSize = batchSize
        self.prefetching = prefetching
        self.state = state
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ids.count }

    /// The object at `position`, loading its batch (and dropping the previous one) when needed. Traps with a message
    /// when the batch cannot be loaded or a row vanished since the fetch; read ``ids`` for a non-trapping path.
    public subscript(position: Int) -> Element {
        let wanted = position / batchSize
        if wanted != batchIndex {
            let start = wanted * batchSize
            let slice = Array(ids[start..<Swift.min(start + batchSize, ids.count)])
            batch = []
            do {
                state.checkExecutor()
                batch = try state.materialize(slice)
                if !prefetching.isEmpty { try state.prefetch(prefetching, for: batch) }
            } catch {
                fatalError("ObjectGraph: cannot load results \(start)..<\(start + slice.count): \(error)")
            }
            guard batch.count == slice.count else {
                fatalError("ObjectGraph: some objects of results \(start)..<\(start + slice.count) were deleted since the fetch")
            }
            batchIndex = wanted
        }
        guard let element = batch[position - wanted * batchSize] as? Element else {
            fatalError("ObjectGraph: result \(position) is not a \(Element.self)")
        }
        return element
    }
}
