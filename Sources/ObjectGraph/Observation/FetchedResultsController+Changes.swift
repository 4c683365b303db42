import Foundation

/// Keeping the results current: changed objects are taken out of their places and put back where they sort now;
/// members a save gave permanent IDs are renamed in place. A reset, a rollback, a change touching most of the
/// results, or renamed IDs that order ties differently fetch again.
extension FetchedResultsController {
    func apply(changed: [ObjectIdentifier: ManagedObject], external: ContextChanges?, rebuild: Bool) {
        guard hasFetched, let state else { return }
        do {
            var renamed: [ObjectID: ObjectID] = [:]
            if state.coordinator.saveCount != lastSaveCount {
                lastSaveCount = state.coordinator.saveCount
                // Only members placed with a temporary ID can have been renamed: those are looked up, where reading
                // every member at every save (and comparing every neighbour after) was a quarter of what a controller
                // over 10,000 results cost an import.
                for key in temporaryMembers {
                    guard let member = members[key], member.object.objectID != member.id else { continue }
                    renamed[member.id] = member.object.objectID
                }
                temporaryMembers = temporaryMembers.filter { members[$0]?.object.objectID.isTemporaryID ?? false }
            }
            if rebuild || (refetchesOnChange && mayChange(changed, external)) {
                return try refetch(renamed: renamed, updated: changed)
            }
            if refetchesOnChange { return }
            // Inserts saved with permanent IDs keep their places, unless the new IDs order ties differently.
            if !renamed.isEmpty, !rename(renamed) {
                return try refetch(renamed: renamed, updated: changed)
            }
            var candidates = changed
            if let external {
                var unknown: [ObjectID] = []
                for id in external.insertedObjectIDs + external.updatedObjectIDs + external.deletedObjectIDs {
                    if let key = identities[id], let member = members[key] {
                        candidates[key] = member.object
                    } else if let object = state.registered[id] {
                        candidates[ObjectIdentifier(object)] = object
                    } else if entityNames.contains(id.entityName) {
                        unknown.append(id)
                    }
                }
                // Objects new to this context: judged by the rows the change carries, and those that match loaded in
                // one read (an import's objects that do not match are never made).
                let deleted = Set(external.deletedObjectIDs)
                // A pending child's row here is this context's view of its object; the change's row otherwise.
                let pending = state.layers.isEmpty ? nil : state.layerView().contents
                let judge = unknown.isEmpty ? nil : fetchRequest.predicate.map { RowPredicate($0, entities: entityNames, model: state.model) }
                let loadable = unknown.filter { id in
                    guard !deleted.contains(id) else { return false }
                    guard let judge,
                          let row = pending?.row(id) ?? external.change(for: id, temporaryID: state.coordinator.temporaryID(for:)).updated
                    else { return true }
                    return (try? judge.evaluate(row, through: { SnapshotSource(snapshot: $0, state: state) })) ?? true
                }
                if !loadable.isEmpty {
                    for object in try state.materialize(loadable) { candidates[ObjectIdentifier(object)] = object }
                }
            }
            if candidates.count > max(256, members.count / 2) {
                return try refetch(renamed: renamed, updated: candidates)
            }
            var change = try place(candidates)
            change.renamedIDs = renamed
            deliver(change)
        } catch {
            // Kept for the app to read, and logged: the results stay as they were until the next change.
            lastError = error
            ObjectGraphLogging.logger.error("the fetched results controller for \(fetchRequest.entityName) could not apply a change: \(error)")
        }
    }

    /// Whether a change can touch results fetched again at each change: an object of the entity changed, or keys
    /// read across relationships (or an app's section names) may have.
    private func mayChange(_ changed: [ObjectIdentifier: ManagedObject], _ external: ContextChanges?) -> Bool {
        if readsOtherObjects { return true }
        if changed.values.contains(where: { entityNames.contains($0.entity.name) }) { return true }
        guard let external else { return false }
        return (external.insertedObjectIDs + external.updatedObjectIDs + external.deletedObjectIDs).contains { entityNames.contains($0.entityName) }
    }

    /// Whether the order or the sections read values of other objects than the results' own.
    private var readsOtherObjects: Bool {
        switch sectioning {
        case .computed: return true
        case .keyPath(let path) where path.count > 1: return true
        default: return fetchRequest.sortKeys.contains { $0.keyPath.count > 1 }
        }
    }

    // MARK: Incremental

    /// Gives members their new IDs in place; false when the order of ties changed (the caller fetches again). Each
    /// renamed member is found by its values, and only its neighbours are compared: the rest kept their order.
    private func rename(_ renamed: [ObjectID: ObjectID]) -> Bool {
        // All found before any is renamed: the search breaks ties by the IDs members were placed with.
        var places: [(section: Int, item: Int, new: ObjectID)] = []
        for (old, new) in renamed {
            guard let key = identities[old], let member = members[key], let path = try? locate(member) else { return false }
            places.append((path.section, path.item, new))
        }
        for (section, item, new) in places {
            identities[buckets[section].members[item].id] = nil
            buckets[section].members[item].id = new
            buckets[section].ids[item] = new
            let key = ObjectIdentifier(buckets[section].members[item].object)
            members[key]?.id = new
            identities[new] = key
        }
        for (section, item, _) in places {
            let bucket = buckets[section].members
            if item > 0 && !precedes(bucket[item - 1], bucket[item]) { return false }
            if item + 1 < bucket.count && !precedes(bucket[item], bucket[item + 1]) { return false }
        }
        return true
    }

    /// Takes each candidate out of its place and puts it back where it sorts now.
    private func place(_ candidates: [ObjectIdentifier: ManagedObject]) throws -> FetchedResultsChange {
        let oldKeys = buckets.map { ($0.key, $0.name) }
        let oldStarts = Self.starts(of: buckets)
        // Where each candidate was, found by the values it was placed with.
        var previous: [ObjectIdentifier: (section: Int, item: Int)] = [:]
        var previousIDs: [ObjectIdentifier: ObjectID] = [:]
        for key in candidates.keys {
            guard let member = members[key] else { continue }
            previous[key] = try locate(member)
            previousIDs[key] = member.id
        }
        let previousAnchors = previous.mapValues { anchor(of: $0, skipping: candidates) }
        // Out, from the back so the other places stay valid.
        for (key, path) in previous.sorted(by: { ($0.value.section, $0.value.item) > ($1.value.section, $1.value.item) }) {
            let member = buckets[path.section].members.remove(at: path.item)
            buckets[path.section].ids.remove(at: path.item)
            members[key] = nil
            identities[member.id] = nil
        }
        // Back in, where they sort now.
        var entered: [ObjectIdentifier] = []
        for (key, object) in candidates where matches(object) {
            let member = try self.member(for: object)
            insert(member)
            members[key] = member
            identities[member.id] = key
            entered.append(key)
        }
        buckets.removeAll { $0.members.isEmpty && sectionNameKeyPath != nil }
        let newStarts = Self.starts(of: buckets)
        var current: [ObjectIdentifier: (section: Int, item: Int)] = [:]
        for key in entered { current[key] = try locate(members[key]!) }

        // A changed object stays in place when it keeps its place among the unchanged ones (the same unchanged
        // object, or the same section's start, before it) and among the changed ones staying with it; others move.
        var sameGap: [Anchor: [ObjectIdentifier]] = [:]
        for (key, after) in current {
            guard let before = previousAnchors[key], before == anchor(of: after, skipping: candidates) else { continue }
            sameGap[before, default: []].append(key)
        }
        var staying: Set<ObjectIdentifier> = []
        for var group in sameGap.values {
            group.sort { (previous[$0]!.section, previous[$0]!.item) < (previous[$1]!.section, previous[$1]!.item) }
            for index in Self.longestIncreasingRun(group.map { current[$0]!.item }) { staying.insert(group[index]) }
        }

        var objectChanges: [FetchedResultsObjectChange] = []
        var differences: [CollectionDifference<ObjectID>.Change] = []
        for key in Set(previous.keys).union(current.keys) {
            let id = members[key]?.id ?? candidates[key]!.objectID
            let before = previous[key], after = current[key]
            let oldID = previousIDs[key] ?? id
            switch (before, after) {
            case let (before?, after?):
                let kind: FetchedResultsObjectChange.Kind = staying.contains(key) ? .update : .move
                objectChanges.append(FetchedResultsObjectChange(kind: kind, objectID: id, indexPath: [before.section, before.item], newIndexPath: [after.section, after.item]))
                guard kind == .move else { continue }
                let (from, to) = (oldStarts[before.section] + before.item, newStarts[after.section] + after.item)
                differences.append(.remove(offset: from, element: oldID, associatedWith: to))
                differences.append(.insert(offset: to, element: id, associatedWith: from))
            case let (before?, nil):
                objectChanges.append(FetchedResultsObjectChange(kind: .delete, objectID: id, indexPath: [before.section, before.item]))
                differences.append(.remove(offset: oldStarts[before.section] + before.item, element: oldID, associatedWith: nil))
            case let (nil, after?):
                objectChanges.append(FetchedResultsObjectChange(kind: .insert, objectID: id, newIndexPath: [after.section, after.item]))
                differences.append(.insert(offset: newStarts[after.section] + after.item, element: id, associatedWith: nil))
            case (nil, nil):
                break
            }
        }
        return FetchedResultsChange(
            snapshot: snapshot, sectionChanges: sectionChanges(from: oldKeys), objectChanges: Self.ordered(objectChanges),
            difference: Self.difference(of: differences), renamedIDs: [:])
    }

    /// What comes before a place, skipping changed objects: an unchanged member, or the start of a section.
    enum Anchor: Hashable {
        case member(ObjectIdentifier)
        case sectionStart(String)
    }

    private func anchor(of path: (section: Int, item: Int), skipping changed: [ObjectIdentifier: ManagedObject]) -> Anchor {
        let bucket = buckets[path.section]
        var item = path.item - 1
        while item >= 0 {
            let key = ObjectIdentifier(bucket.members[item].object)
            if changed[key] == nil { return .member(key) }
            item -= 1
        }
        return .sectionStart(bucket.name)
    }

    /// Where a member is: its section by the section key, its item by its sort values and ID.
    private func locate(_ member: Member) throws -> (section: Int, item: Int) {
        let section = try sectionIndex(for: sectionKey(member))
        let low = buckets[section].members.partitioningIndex { precedes($0, member) }
        if low < buckets[section].members.count, buckets[section].members[low].object === member.object { return (section, low) }
        // Equal sort values and IDs cannot differ from where the member was placed; this is a broken invariant.
        guard let item = buckets[section].members.firstIndex(where: { $0.object === member.object }) else {
            throw ObjectGraphError.invalidFetch(entity: fetchRequest.entityName, reason: "the fetched results controller lost \(member.id)")
        }
        return (section, item)
    }

    private func sectionIndex(for key: AttributeValue) throws -> Int {
        guard sectionNameKeyPath != nil else { return 0 }
        var low = 0, high = buckets.count
        while low < high {
            let middle = (low + high) / 2
            if sectionOrder(buckets[middle].key, key) == .orderedAscending { low = middle + 1 } else { high = middle }
        }
        guard low < buckets.count, sectionOrder(buckets[low].key, key) == .orderedSame else {
            throw ObjectGraphError.invalidFetch(entity: fetchRequest.entityName, reason: "the fetched results controller has no section '\(Self.sectionName(key))'")
        }
        return low
    }

    private func insert(_ member: Member) {
        var section = 0
        if sectionNameKeyPath != nil {
            let key = sectionKey(member)
            var low = 0, high = buckets.count
            while low < high {
                let middle = (low + high) / 2
                if sectionOrder(buckets[middle].key, key) == .orderedAscending { low = middle + 1 } else { high = middle }
            }
            if low == buckets.count || sectionOrder(buckets[low].key, key) != .orderedSame {
                buckets.insert(Bucket(key: key, name: Self.sectionName(key), members: ChunkedList(), ids: ChunkedList()), at: low)
            }
            section = low
        }
        let position = buckets[section].members.partitioningIndex { precedes($0, member) }
        buckets[section].members.insert(member, at: position)
        buckets[section].ids.insert(member.id, at: position)
    }

    private static func starts(of buckets: [Bucket]) -> [Int] {
        var starts: [Int] = []
        starts.reserveCapacity(buckets.count)
        var total = 0
        for bucket in buckets {
            starts.append(total)
            total += bucket.members.count
        }
        return starts
    }

    /// Sections that disappeared (old indexes) and appeared (new indexes), both lists being in section order.
    private func sectionChanges(from old: [(key: AttributeValue, name: String)]) -> [FetchedResultsSectionChange] {
        switch sectioning {
        case .none: return []
        case .keyPath, .computed: return sectionChangesByName(from: old.map(\.name))
        case .firstSortKey: break
        }
        var changes: [FetchedResultsSectionChange] = []
        var i = 0, j = 0
        while i < old.count || j < buckets.count {
            let order: ComparisonResult = i == old.count ? .orderedDescending : j == buckets.count ? .orderedAscending : sectionOrder(old[i].key, buckets[j].key)
            switch order {
            case .orderedSame: i += 1; j += 1
            case .orderedAscending:
                changes.append(FetchedResultsSectionChange(kind: .delete, name: old[i].name, index: i))
                i += 1
            case .orderedDescending:
                changes.append(FetchedResultsSectionChange(kind: .insert, name: buckets[j].name, index: j))
                j += 1
            }
        }
        return changes
    }

    /// Sections named by another key than the first sort key follow no order of their own: those in both lists
    /// whose order holds (the longest increasing run) stay, and every other one goes and comes.
    private func sectionChangesByName(from old: [String]) -> [FetchedResultsSectionChange] {
        let newIndex = Dictionary(buckets.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        let common = old.enumerated().compactMap { index, name in newIndex[name].map { (old: index, new: $0) } }
        let staying = Self.longestIncreasingRun(common.map(\.new))
        let kept = Set(staying.map { common[$0].old }), arrived = Set(staying.map { common[$0].new })
        var changes: [FetchedResultsSectionChange] = []
        for (index, name) in old.enumerated() where !kept.contains(index) {
            changes.append(FetchedResultsSectionChange(kind: .delete, name: name, index: index))
        }
        for (index, bucket) in buckets.enumerated() where !arrived.contains(index) {
            changes.append(FetchedResultsSectionChange(kind: .insert, name: bucket.name, index: index))
        }
        return changes
    }

    /// Deletes by old place, then inserts, moves and updates by new place, as a table view applies them.
    static func ordered(_ changes: [FetchedResultsObjectChange]) -> [FetchedResultsObjectChange] {
        changes.sorted { a, b in
            let rank: (FetchedResultsObjectChange) -> Int = { $0.kind == .delete ? 0 : 1 }
            if rank(a) != rank(b) { return rank(a) < rank(b) }
            let pa = a.kind == .delete ? a.indexPath! : a.newIndexPath!, pb = b.kind == .delete ? b.indexPath! : b.newIndexPath!
            return pa < pb
        }
    }

    // MARK: Fetching again

    /// Fetches again and reports the difference from the last snapshot (after renaming `renamed`): for a reset, a
    /// rollback, a save that gave members permanent IDs, or a change touching most of the results.
    private func refetch(renamed: [ObjectID: ObjectID], updated: [ObjectIdentifier: ManagedObject]) throws {
        let oldKeys = buckets.map { ($0.key, $0.name) }
        var oldPaths: [ObjectID: (section: Int, item: Int)] = [:]
        var oldIDs: [ObjectID] = []
        for (section, bucket) in buckets.enumerated() {
            for (item, id) in bucket.ids.enumerated() {
                let current = renamed[id] ?? id
                oldPaths[current] = (section, item)
                oldIDs.append(current)
            }
        }
        try performFetch()
        var newPaths: [ObjectID: (section: Int, item: Int)] = [:]
        var newIDs: [ObjectID] = []
        for (section, bucket) in buckets.enumerated() {
            for (item, id) in bucket.ids.enumerated() {
                newPaths[id] = (section, item)
                newIDs.append(id)
            }
        }
        let sectionChanges = sectionChanges(from: oldKeys)
        // Which old section became which new one: those neither deleted nor inserted, in order.
        let deletedSections = Set(sectionChanges.filter { $0.kind == .delete }.map(\.index))
        let insertedSections = Set(sectionChanges.filter { $0.kind == .insert }.map(\.index))
        let keptSections = Dictionary(uniqueKeysWithValues: zip(
            oldKeys.indices.filter { !deletedSections.contains($0) }, buckets.indices.filter { !insertedSections.contains($0) }))
        let updatedIDs = Set(updated.values.map(\.objectID))
        var differences: [CollectionDifference<ObjectID>.Change] = []
        var objectChanges: [FetchedResultsObjectChange] = []
        // Objects in both whose relative order holds (the longest increasing run of new offsets) stay; the others move.
        let common = oldIDs.enumerated().compactMap { offset, id in newPaths[id] == nil ? nil : (offset, id) }
        let newOffsets = Dictionary(uniqueKeysWithValues: newIDs.enumerated().map { ($1, $0) })
        let staying = Self.longestIncreasingRun(common.map { newOffsets[$0.1]! })
        for (index, (offset, id)) in common.enumerated() {
            let before = oldPaths[id]!, after = newPaths[id]!
            // Staying means keeping its place among the others and its section.
            if staying.contains(index), keptSections[before.section] == after.section {
                if updatedIDs.contains(id) {
                    objectChanges.append(FetchedResultsObjectChange(kind: .update, objectID: id, indexPath: [before.section, before.item], newIndexPath: [after.section, after.item]))
                }
                continue
            }
            objectChanges.append(FetchedResultsObjectChange(kind: .move, objectID: id, indexPath: [before.section, before.item], newIndexPath: [after.section, after.item]))
            differences.append(.remove(offset: offset, element: id, associatedWith: newOffsets[id]!))
            differences.append(.insert(offset: newOffsets[id]!, element: id, associatedWith: offset))
        }
        for (offset, id) in oldIDs.enumerated() where newPaths[id] == nil {
            let before = oldPaths[id]!
            objectChanges.append(FetchedResultsObjectChange(kind: .delete, objectID: id, indexPath: [before.section, before.item]))
            differences.append(.remove(offset: offset, element: id, associatedWith: nil))
        }
        for (offset, id) in newIDs.enumerated() where oldPaths[id] == nil {
            let after = newPaths[id]!
            objectChanges.append(FetchedResultsObjectChange(kind: .insert, objectID: id, newIndexPath: [after.section, after.item]))
            differences.append(.insert(offset: offset, element: id, associatedWith: nil))
        }
        deliver(FetchedResultsChange(
            snapshot: snapshot, sectionChanges: sectionChanges, objectChanges: Self.ordered(objectChanges),
            difference: Self.difference(of: differences), renamedIDs: renamed))
    }

    /// The difference `changes` make, sorted first as the standard library orders them (removals, then by offset):
    /// its initializer sorts them again through generic code that is not specialized, and takes one pass over
    /// changes already in order (sorting a hundred insertions in it took a third of placing them in results of
    /// thousands).
    static func difference(of changes: [CollectionDifference<ObjectID>.Change]) -> CollectionDifference<ObjectID> {
        func rank(_ change: CollectionDifference<ObjectID>.Change) -> (Int, Int) {
            switch change {
            case .remove(let offset, _, _): (0, offset)
            case .insert(let offset, _, _): (1, offset)
            }
        }
        return CollectionDifference(changes.sorted { rank($0) < rank($1) }) ?? CollectionDifference([])!
    }

    /// The indexes of a longest strictly increasing subsequence (patience sorting, O(n log n)).
    static func longestIncreasingRun(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []          // index into values of the smallest tail of each length
        var previous = Array(repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: Set<Int> = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.insert(cursor)
            cursor = previous[cursor]
        }
        return result
    }
}
