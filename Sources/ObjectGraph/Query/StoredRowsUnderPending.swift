/// The stored rows a fetch's slice can come from, when pending rows stand in for some of them.
///
/// Each stored row a pending update or delete replaces can push at most one row below out of the slice, so the
/// store is asked for that many more than the slice. Pending inserts replace nothing, so they do not widen the
/// read: a fetch of the first 1,000 objects beside an import of 100,000 reads 1,000 stored rows, not 101,000. Once
/// a root's write has committed, the store holds copies of its pending inserts; a copy is left out for its pending
/// row, which has its values and its key (a view of a write orders pending inserts by their reserved keys), so it
/// takes the copy's place in the order and needs no room of its own.
enum StoredRowsUnderPending {
    /// - Parameters:
    ///   - slice: the fetch's offset plus its limit; nil reads every row.
    ///   - replacing: how many stored rows pending updates and deletes may replace.
    ///   - read: reads the first rows below in the fetch's order, at most the given number (nil: all).
    ///   - isReplaced: whether a pending update or delete stands for the stored row.
    ///   - isPendingCopy: whether the stored row is a pending insert's row, written since the view was published.
    static func rows(
        slice: Int?, replacing: Int,
        read: (Int?) throws -> [Snapshot], isReplaced: (Snapshot) -> Bool, isPendingCopy: (Snapshot) -> Bool = { _ in false }
    ) throws -> [Snapshot] {
        let rows = try read(slice.map { $0 + replacing })
        return rows.filter { !isReplaced($0) && !isPendingCopy($0) }
    }
}
