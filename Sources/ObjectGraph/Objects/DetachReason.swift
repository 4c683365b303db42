/// Why an object no longer belongs to a context: what an error about using it afterwards says.
///
/// One byte in every object rather than a string (sixteen bytes, and a store on each of the objects a reset
/// detaches).
enum DetachReason: UInt8, CustomStringConvertible {
    case contextDeallocated
    case contextReset
    case deletionSaved
    case deletedByAnotherContext
    case deletedBeforeSaved
    case insertRolledBack
    /// Made by an `@Entity` class's own initializer and not inserted yet (see ``ManagedObject/init()``).
    case notInserted

    var description: String {
        switch self {
        case .contextDeallocated: "its context was deallocated"
        case .contextReset: "its context was reset"
        case .deletionSaved: "its deletion was saved"
        case .deletedByAnotherContext: "another context's save deleted it"
        case .deletedBeforeSaved: "it was deleted before it was ever saved"
        case .insertRolledBack: "its insert was rolled back"
        case .notInserted: "it has not been inserted into a context yet"
        }
    }
}
