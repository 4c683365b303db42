import Foundation

extension ContextState {
    /// The objects inserted here and still pending, in the order they were inserted (which is also their order in
    /// memory): still flagged inserted, and still attached to this context.
    var pendingInserts: LazyFilterSequence<[ManagedObject]> {
        insertionOrder.lazy.filter { $0.isInserted && $0.state === self }
    }

    /// Whether any insert is pending.
    var hasPendingInserts: Bool { !pendingInserts.isEmpty }

    var hasChanges: Bool {
        hasPendingInserts || !deleted.isEmpty || !layers.isEmpty || updated.objects.contains { !$0.changedKeys().isEmpty }
    }

    /// Validates, then hands every pending change to what lies below: a child pushes its changes into its parent
    /// (nothing reaches disk); a root context writes one store transaction. On any error nothing is written and
    /// every pending change stays in place.
    func save() throws {
        // As Core Data's save, observers hear the changes being saved first.
        observation?.process()
        guard hasChanges else {
            settleHeldObjects()
            return
        }
        notifications.post(.willSave, ContextChanges(), from: self)
        try applyDeleteRules()
        // Core Data's willSave, then didSave once the save succeeded, on every object the save writes.
        let saving = Array(pendingInserts) + updated.objects.filter { !$0.isDeleted } + Array(deleted.values)
        // An object a hook of another deleted before its turn has left the context: it hears nothing.
        for object in saving where object.state === self { object.willSave() }
        let failures = validate()
        guard failures.isEmpty else { throw ObjectGraphError.validation(failures) }
        var own = try makeChangeSet()
        // A child's change set becomes a layer its parent's fetches read by attribute value: index it here, on
        // this queue, rather than on the parent's (which may be the main thread). A root's is read only by those
        // who hear its did-save: it is indexed below, if anyone listens.
        if !isRoot {
            own.buildIndex()
            own.buildEqualityIndexes(model: model)
        }
        var saved = layers + [own]
        let result: SaveResult
        if isRoot {
            do {
                result = try writeToStore(flatten(saved))
            } catch {
                // Nothing was written: publish what is pending again (or withdraw a view showing own changes).
                republishView()
                throw error
            }
        } else {
            result = try below.push(saved, from: ObjectIdentifier(self))
        }
        apply(result)
        conflictChecks = [:]
        for object in saving { object.didSave() }
        for set in saved { for (id, _) in set.deleted { deletedForGood.insert(coordinator.resolve(id)) } }
        if isRoot, saved.contains(where: { !$0.deleted.isEmpty }) {
            let gone = Set(saved.lazy.flatMap(\.deleted).map { self.coordinator.resolve($0.objectID) })
            inFlight.viewChanges.record(unlinkDeletedRows(gone))
        }
        forgetDiscarded(result.discarded)
        // Inserts now have permanent IDs: observers rename them in one diff.
        if !result.permanentIDs.isEmpty { observation?.noteRenamed() }
        layers = []
        hasOwnEdits = false
        // Every saved object starts its next event from the row just saved.
        observation?.eventStates.removeAll()
        if isRoot { advanceQueryGeneration() }
        if isRoot { republishView() }
        // Listeners hear the rows as the store holds them, settled conflicts included.
        if isRoot, !result.refreshed.isEmpty { saved = saved.map { $0.settled(by: result.refreshed, model: model) } }
        if isRoot && notifications.hasSubscribers(for: .didSave) { saved[saved.count - 1].buildIndex() }
        notifications.post(.didSave, ContextChanges(layers: saved, permanentIDs: result.permanentIDs), from: self)
    }

    /// Takes objects the parent had deleted for good, which this context's save named (see
    /// ``SaveResult/discarded``), out of every loaded list here: the parent lists them nowhere. (Fetches here no
    /// longer show them: nothing is pending here after the save, and the parent does not show them.)
    private func forgetDiscarded(_ discarded: Set<ObjectID>) {
        removeFromLists(discarded) { _ in true }
    }

    /// Lets go of objects changed and set back (marked updated, nothing to write), as a save of them does: they show
    /// what lies below again, as every object with nothing pending does (ARCHITECTURE.md, "What a context shows").
    private func settleHeldObjects() {
        guard updated.count > 0 else { return }
        updated.removeAll()
        hasOwnEdits = false
        if isRoot { republishView() }
    }

    /// Merges change sets (a root's received layers, then its own, last) into one, later changes winning, with the
    /// versions this root knows to be current.
    func flatten(_ sets: [ChangeSet]) -> ChangeSet {
        func current(_ id: ObjectID, _ version: Int64) -> Int64 {
            // Version 0 on a row that is not inserted here: a child read it from a layer whose insert an earlier save
            // of this tree already wrote, at version 1.
            max(version, 1, registered[id]?.committedVersionIfAny ?? 0, savedVersions[id] ?? 0)
        }
        if sets.dropLast().allSatisfy(\.isEmpty), let own = sets.last, !own.isEmpty {
            // Only this context's own changes: each row's version is its registered object's, so only what this
            // root's own saves wrote since can be newer (a change a child pushed and this root saved).
            return flattenOne(renamedToCurrentIDs(own, reindex: false)) { id, version in
                max(version, 1, savedVersions.isEmpty ? 0 : savedVersions[id] ?? 0)
            }
        }
        let sets = sets.filter { !$0.isEmpty }
        if sets.count == 1 { return flattenOne(renamedToCurrentIDs(sets[0], reindex: false), current: current) }
        var order: [ObjectID] = []
        var inserts: [ObjectID: ChangeSet.Row] = [:]
        var updates: [ObjectID: ChangeSet.Row] = [:]
        var updateOrder: [ObjectID] = []
        var deletes: [ObjectID: Int64] = [:]
        // Every object a layer deleted, its insert cancelled or its row to go.
        var gone: Set<ObjectID> = []
        var toMany: [ObjectID: [String: ChangeSet.ToManyContents]] = [:]
        let renamed = sets.map { renamedToCurrentIDs($0, reindex: false) }
        // A context's own inserts come after the layers of its children that updated them (a root's, and a child's
        // pushed with its own): such an update is in the insert, which holds the object's current values (each
        // layer's rows were shown in it as they came).
        let inserted: Set<ObjectID> = Set(renamed.flatMap { $0.inserted.map { $0.objectID } })
        for set in renamed {
            for row in set.inserted {
                if inserts[row.objectID] == nil { order.append(row.objectID) }
                inserts[row.objectID] = row
            }
            for row in set.updated {
                // A later layer cannot bring back what an earlier one deleted.
                if deletes[row.objectID] != nil { continue }
                if inserts[row.objectID] == nil, inserted.contains(row.objectID) { continue }
                if var insert = inserts[row.objectID] {
                    insert.values = row.values
                    insert.toOne = row.toOne
                    inserts[row.objectID] = insert
                } else if var update = updates[row.objectID] {
                    update.values = row.values
                    update.toOne = row.toOne
                    update.changedAttributes = Array(Set(update.changedAttributes).union(row.changedAttributes)).sorted()
                    update.changedToOne = Array(Set(update.changedToOne).union(row.changedToOne)).sorted()
                    updates[row.objectID] = update
                } else {
                    updates[row.objectID] = row
                    updateOrder.append(row.objectID)
                }
            }
            for (id, version) in set.deleted {
                gone.insert(id)
                if inserts.removeValue(forKey: id) != nil {
                    updates[id] = nil
                    continue
                }
                updates[id] = nil
                deletes[id] = version
            }
            for contents in set.toMany { toMany[contents.objectID, default: [:]][contents.relationship] = contents }
        }
        // A link one layer brought to an object another layer deletes, in whichever order they came, is the
        // deletion's nullify rule's to run: the store will not hold the object, and each child's rules ran over
        // what it showed, not over its siblings' rows.
        func unlinkingGone(_ row: ChangeSet.Row, isUpdate: Bool) -> ChangeSet.Row {
            guard !gone.isEmpty, row.toOne.contains(where: { $0.map(gone.contains) == true }) else { return row }
            var row = row
            for slot in row.toOne.indices where row.toOne[slot].map(gone.contains) == true {
                row.toOne[slot] = nil
                if isUpdate && !row.changedToOne.contains(slot) { row.changedToOne = (row.changedToOne + [slot]).sorted() }
            }
            return row
        }
        var flat = ChangeSet()
        flat.inserted = order.compactMap { inserts[$0].map { unlinkingGone($0, isUpdate: false) } }
        flat.updated = updateOrder.compactMap { id in updates[id].map { row in
            var row = unlinkingGone(row, isUpdate: true)
            row.version = current(id, row.version)
            return row
        } }
        flat.deleted = deletes.map { ($0.key, current($0.key, $0.value)) }.sorted { $0.0 < $1.0 }
        // A deleted owner's relationships go with its row, and a deleted object leaves the lists an earlier layer
        // wrote (a child's rules leave a list it had not loaded alone, decision 27): rewriting them would point join
        // rows at nothing.
        flat.toMany = toMany.flatMap { owner, lists -> [ChangeSet.ToManyContents] in
            guard !gone.contains(owner) else { return [] }
            guard !gone.isEmpty else { return Array(lists.values) }
            return lists.values.map { contents in
                var contents = contents
                if contents.destinations.contains(where: gone.contains) { contents.destinations.removeAll(where: gone.contains) }
                return contents
            }
        }
        flat.checked = Self.checks(renamed.flatMap(\.checked), besides: flat, current: current)
        flat.mergePolicy = mergePolicy
        return flat
    }

    /// The version checks of `checks` for objects `flat` writes nothing for (a write checks its own version), each
    /// once, at the version this tree knows to be current.
    private static func checks(
        _ checks: [(objectID: ObjectID, version: Int64)], besides flat: ChangeSet, current: (ObjectID, Int64) -> Int64
    ) -> [(objectID: ObjectID, version: Int64)] {
        guard !checks.isEmpty else { return [] }
        var written = Set(flat.updated.map(\.objectID))
        written.formUnion(flat.deleted.map(\.objectID))
        written.formUnion(flat.inserted.map(\.objectID))
        var seen: Set<ObjectID> = []
        return checks.compactMap { check in
            guard !written.contains(check.objectID), seen.insert(check.objectID).inserted else { return nil }
            return (check.objectID, current(check.objectID, check.version))
        }
    }

    /// ``flatten(_:)`` for one set (a root saving only its own changes): the same rules without re-indexing every
    /// row, since one set holds each object once. A delete cancels an insert of the same object and drops its
    /// update; a deleted owner's to-many rewrites go with it.
    private func flattenOne(_ set: ChangeSet, current: (ObjectID, Int64) -> Int64) -> ChangeSet {
        var flat = set
        flat.presetIDs = [:]
        if !set.deleted.isEmpty {
            // Filtering moves rows: the index (positions) no longer holds.
            flat.index = ChangeSetIndex()
            let inserts = Set(set.inserted.map(\.objectID))
            let deletes = Set(set.deleted.map(\.objectID))
            flat.inserted = set.inserted.filter { !deletes.contains($0.objectID) }
            flat.updated = set.updated.filter { !deletes.contains($0.objectID) }
            flat.deleted = set.deleted.filter { !inserts.contains($0.objectID) }
            flat.toMany = set.toMany.filter { !deletes.contains($0.objectID) }
        }
        // Written only where the version changes: the set's rows are shared with the layers a did-save publishes,
        // and writing any row copied all of them (50,000 rows retained, then released).
        for index in flat.updated.indices {
            let version = current(flat.updated[index].objectID, flat.updated[index].version)
            if version != flat.updated[index].version { flat.updated[index].version = version }
        }
        flat.deleted = flat.deleted.map { ($0.objectID, current($0.objectID, $0.version)) }.sorted { $0.0 < $1.0 }
        flat.checked = Self.checks(flat.checked, besides: flat, current: current)
        flat.mergePolicy = mergePolicy
        return flat
    }

    // MARK: Delete rules

    /// One relationship of one object: what the delete rules read of a doomed object, and what a survivor loses.
    private struct RuledKey: Hashable {
        let owner: ObjectID
        let index: Int

        func hash(into hasher: inout Hasher) { hasher.combine(owner.rawKey &* 64 &+ Int64(index)) }
        /// One word's hash, as ``ObjectID``'s (see there): a large delete looks up two keys per object.
        func _rawHashValue(seed: Int) -> Int { (owner.rawKey &* 64 &+ Int64(index))._rawHashValue(seed: seed) }
    }

    /// The destinations of relationship `index` of a doomed object: its own contents where it loaded them, else
    /// what ``loadRuledRelationships(of:into:)`` read for it (the object is going, so its to-many is not installed).
    private func related(_ object: ManagedObject, _ index: Int, _ readAhead: [RuledKey: [ObjectID]]) throws -> [ObjectID] {
        if let slot = object.entity.toOneSlot[index] {
            if object.isFaultStorage { try fulfill(object) }
            return object.toOne[slot].map { [$0] } ?? []
        }
        if let read = readAhead[RuledKey(owner: object.objectID, index: index)] { return read }
        return try loadedToMany(object, index).ids
    }

    /// Cascades, checks deny rules, then nullifies, so a denied delete changes nothing.
    ///
    /// The relationships the rules follow are loaded a wave of deletions at a time (one store read per relationship
    /// and 500 objects), and a survivor's to-many that is not loaded is left so: loaded later, it reads without the
    /// deleted members (``isHidden(_:)``), and after the save the store no longer has them. Deleting 50,000 books
    /// loaded each book's chapters and tags, and each author's and tag's books, one object at a time.
    ///
    /// `propagating`: only the deletions made since the last propagation, and no deny rule checked or followed (the
    /// save checks them): what processing pending changes does (see ``propagatePendingDeletions()``).
    func applyDeleteRules(propagating: Bool = false) throws {
        // A child's deletions arrive with its rules applied (what they cascade to is deleted in the same layer, and
        // the lists it had not loaded read without them): only this context's own deletions are ruled here. The
        // others may not even be readable any more, their rows gone from every layer's view.
        let deletedInLayers: (ObjectID) -> Bool = { [layers] id in layers.contains { $0.index.deleted[id] != nil } }
        var doomed = layers.isEmpty ? deleted : deleted.filter { !deletedInLayers($0.key) }
        if propagating { doomed = doomed.filter { !propagatedDeletions.contains($0.key) } }
        guard !doomed.isEmpty else { return }
        defer { propagatedDeletions.formUnion(doomed.keys) }
        var wave = Array(doomed.values)
        var readAhead: [RuledKey: [ObjectID]] = [:]
        var plans = RulePlans()
        while !wave.isEmpty {
            // A child's view follows its parent's: a link may reach it after its deletion ran the rules. A root's
            // links to its deletions come only from merges and children's saves, which unlink them as they arrive.
            try loadRuledRelationships(of: wave, into: &readAhead, again: !propagating && !isRoot)
            var next: [ManagedObject] = []
            for object in wave {
                for index in try plans.plan(for: object.entity, in: self).cascade {
                    for id in try related(object, index, readAhead) where doomed[id] == nil && !deletedInLayers(id) {
                        let target = try self.object(with: id)
                        doomed[id] = target
                        next.append(target)
                    }
                }
            }
            wave = next
        }
        // Deny rules are checked in ID order, so the error names the same object whatever the dictionary's order.
        let denying = propagating ? [] : doomed.values.filter { $0.entity.relationships.contains { $0.deleteRule == .deny } }
        for object in denying.sorted(by: { $0.objectID < $1.objectID }) {
            for index in try plans.plan(for: object.entity, in: self).deny {
                let survivors = try related(object, index, readAhead).filter { doomed[$0] == nil && !deletedInLayers($0) }
                if !survivors.isEmpty {
                    throw ObjectGraphError.deleteDenied(
                        entity: object.entity.name, objectID: object.objectID, relationship: object.entity.relationships[index].name,
                        count: survivors.count)
                }
            }
        }
        isApplyingDeleteRules = true
        defer { isApplyingDeleteRules = false }
        if model.hasOneSidedRelationships { clearOneSidedReferences(to: doomed) }
        for object in doomed.values where object.isInserted {
            if !object.isDeleted { object.prepareForDeletion() }
            try delete(object)
            doomed[object.objectID] = nil
        }
        // Each survivor's inverse loses the doomed objects that pointed to it, all at once per relationship.
        var losses: [RuledKey: [ObjectID]] = [:]
        deleted.reserveCapacity(doomed.count)
        for object in doomed.values {
            // A cascade's objects hear of their deletion here; those deleted by the app heard at `delete(_:)`.
            if !object.isDeleted { object.prepareForDeletion() }
            object.isDeleted = true
            deleted[object.objectID] = object
            for (index, inverseIndex) in try plans.plan(for: object.entity, in: self).inverses
            where !propagating || object.entity.relationships[index].deleteRule != .deny {
                for id in try related(object, index, readAhead) where doomed[id] == nil && !deletedInLayers(id) {
                    losses[RuledKey(owner: id, index: inverseIndex), default: []].append(object.objectID)
                }
            }
        }
        // Survivors' rows in one read per entity: their to-ones are cleared, and a changed object needs its values.
        let loaded = try materialize(Array(Set(losses.keys.map(\.owner))))
        defer { withExtendedLifetime(loaded) {} }
        for (key, gone) in losses {
            let survivor = try self.object(with: key.owner)
            // Still a fault after the read above, or found gone when read again: its row is gone below (deleted since
            // this context listed it), and there is nothing of it to unlink. Unlinking it would be a change to a row
            // no store holds, which a child's save would bring back into its parent.
            if survivor.isFaultStorage || (!goneBelow.isEmpty && goneBelow.contains(survivor.objectID) && !showsOwnState(survivor)) { continue }
            // Marked updated when it changed: a to-one cleared, or a loaded list. An unloaded list reads without the
            // doomed objects whenever it loads, so there is nothing of it to change or to save.
            if let slot = survivor.entity.toOneSlot[key.index] {
                guard let current = survivor.toOne[slot], gone.contains(current) else { continue }
                survivor.toOne[slot] = nil
                markUpdated(survivor)
            } else if var contents = survivor.toMany[key.index] {
                survivor.toMany[key.index] = nil
                contents.remove(Set(gone))
                survivor.toMany[key.index] = contents
                markUpdated(survivor, listsOnly: true)
            }
        }
    }

    /// What the delete rules follow of each entity's objects, worked out once per entity and save rather than by
    /// copying every relationship's description for every object.
    private struct RulePlans {
        struct Plan {
            /// The relationships that cascade, and those that deny.
            var cascade: [Int] = [], deny: [Int] = []
            /// The relationships with a rule whose destinations point back, with the destination's inverse: those
            /// lose a deleted object. (Without an inverse, the destination does not point back: nothing to clear.)
            var inverses: [(index: Int, inverse: Int)] = []
        }

        private var plans: [ObjectIdentifier: Plan] = [:]
        private var last: (entity: ModelEntity, plan: Plan)?

        mutating func plan(for entity: ModelEntity, in state: ContextState) throws -> Plan {
            if let last, last.entity === entity { return last.plan }
            if let plan = plans[ObjectIdentifier(entity)] {
                last = (entity, plan)
                return plan
            }
            var plan = Plan()
            for (index, relationship) in entity.relationships.enumerated() {
                switch relationship.deleteRule {
                case .cascade: plan.cascade.append(index)
                case .deny: plan.deny.append(index)
                default: break
                }
                if relationship.deleteRule != .noAction, let inverse = try state.inverse(of: relationship) {
                    plan.inverses.append((index, inverse.index))
                }
            }
            plans[ObjectIdentifier(entity)] = plan
            last = (entity, plan)
            return plan
        }
    }

    /// Reads, for `objects` about to be deleted, what the delete rules follow: their rows (to-ones live there) and
    /// the to-many relationships with a rule that reads them, not loaded yet, into `readAhead`.
    ///
    /// `again` (a save running the rules again): a loaded list of a to-one inverse is read again too, since links to
    /// the deleted object may have reached this context from below after the deletion loaded it; the members it
    /// listed that still point there stay.
    private func loadRuledRelationships(of objects: [ManagedObject], into readAhead: inout [RuledKey: [ObjectID]], again: Bool) throws {
        let faults = objects.filter(\.isFaultStorage).map(\.objectID)
        if !faults.isEmpty { _ = try materialize(faults) }
        for group in Dictionary(grouping: objects, by: { ObjectIdentifier($0.entity) }).values {
            for (index, relationship) in group[0].entity.relationships.enumerated() where relationship.isToMany {
                let read = relationship.deleteRule == .cascade || relationship.deleteRule == .deny
                    || (relationship.deleteRule == .nullify && relationship.hasInverse)
                guard read else { continue }
                let inverseSlot = movingInverse(of: group[0].entity, index)
                let readsAgain = again && inverseSlot != nil && !relationship.isOrdered
                let owners = group.filter { ($0.toMany[index] == nil || readsAgain) && !$0.isInserted }
                guard !owners.isEmpty else { continue }
                let lists = try layeredRelatedIDs(of: owners.map(\.objectID), relationship: relationship)
                // As a load here would read them: with the members this context shows pointing there on its own,
                // which below may list nowhere (its parent deleted one this context changed).
                let ownLinks = ownLinks(to: owners.map(\.objectID), of: group[0].entity, through: index)
                readAhead.reserveCapacity(readAhead.count + owners.count)
                for (owner, list) in zip(owners, lists) {
                    let stored = resolved(list)
                    var members = currentMembers(stored, of: owner.objectID, inverseSlot: inverseSlot)
                    members += (ownLinks[owner.objectID] ?? []).filter { !stored.contains($0) }
                    if let loaded = owner.toMany[index], let inverseSlot {
                        let known = Set(members)
                        members += loaded.ids.filter { id in
                            !known.contains(id) && registered[id].map { !$0.isFaultStorage && links($0, at: inverseSlot, to: owner.objectID) } == true
                        }
                    }
                    readAhead[RuledKey(owner: owner.objectID, index: index)] = members
                }
            }
        }
    }

    /// Clears the references to `doomed` objects that relationships without an inverse hold in objects registered
    /// here: nothing points back from a doomed object to find them by, so each registered object looks. The store
    /// clears those held in rows no context has registered.
    private func clearOneSidedReferences(to doomed: [ObjectID: ManagedObject]) {
        for object in registered.objects where doomed[object.objectID] == nil && !object.isFaultStorage {
            for (index, relationship) in object.entity.relationships.enumerated() where !relationship.hasInverse {
                if let slot = object.entity.toOneSlot[index] {
                    if let id = object.toOne[slot], doomed[id] != nil {
                        object.toOne[slot] = nil
                        markUpdated(object)
                    }
                } else if var contents = object.toMany[index], contents.ids.contains(where: { doomed[$0] != nil }) {
                    for id in contents.ids where doomed[id] != nil { contents.remove(id) }
                    object.toMany[index] = contents
                    markUpdated(object, listsOnly: true)
                }
            }
        }
    }

    // MARK: Validation

    /// Every rule every changed object breaks, together.
    func validate() -> [ValidationFailure] {
        // One list for every object, appended to in place: a list per object and per hook, appended empty, cost an
        // allocation each (eight per inserted object, 8% of inserting 50,000).
        var failures: [ValidationFailure] = []
        for object in pendingInserts where !object.isDeleted { validate(object, into: &failures) }
        for object in updated.objects where !object.isDeleted { validate(object, into: &failures) }
        for object in deleted.values {
            Self.collect(&failures, of: object) { try object.validateForDelete() }
        }
        return failures.sorted { ($0.objectID, $0.key ?? "") < ($1.objectID, $1.key ?? "") }
    }

    /// Adds the failures `check`, a model class's validation hook for `object`, reports to `failures`: a
    /// ``ValidationFailure``, a list of them, or any other error as one failure of the object.
    private static func collect(_ failures: inout [ValidationFailure], of object: ManagedObject, key: String? = nil, _ check: () throws -> Void) {
        do {
            try check()
        } catch let failure as ValidationFailure {
            failures.append(failure)
        } catch ObjectGraphError.validation(let list) {
            failures += list
        } catch {
            failures.append(ValidationFailure(entity: object.entity.name, objectID: object.objectID, key: key, reason: "\(error)"))
        }
    }

    /// Why a store would not keep `value` as it is, if it would not: SQLite ends text at a NUL character, stores NaN
    /// as NULL and -0.0 as 0.0. Every store refuses them alike, so an app behaves the same on each.
    static func unstorableReason(_ value: AttributeValue) -> String? {
        switch value {
        case .string(let text) where text.utf8.contains(0):
            "holds a NUL character, which would cut the stored string short; remove it, or keep the bytes in a Binary attribute"
        case .double(let number) where number.isNaN:
            "is NaN, which would be stored as no value; use nil for a missing number"
        case .double(let number) where number == 0 && number.sign == .minus:
            "is -0.0, which would be stored as 0.0; store 0.0"
        default: nil
        }
    }

    private func validate(_ object: ManagedObject, into failures: inout [ValidationFailure]) {
        func fail(_ key: String?, _ reason: String) {
            failures.append(ValidationFailure(entity: object.entity.name, objectID: object.objectID, key: key, reason: reason))
        }
        let entity = object.entity
        for index in entity.unstorableValueAttributes {
            if let reason = Self.unstorableReason(object.values[index]) { fail(entity.attributeNames[index], reason) }
        }
        for (index, kind) in zip(entity.validatedAttributes, entity.validationKinds) {
            if object.values.isNull(at: index) {
                if !kind.isOptional { fail(entity.attributes[index].name, "is required but has no value") }
                continue
            }
            // A required attribute with a value and no other rule (the common case) needs nothing more.
            guard kind.hasRange || kind.hasLength || kind.hasPattern else { continue }
            let value = object.values[index]
            let attribute = entity.attributes[index]
            if case .date(let date) = value {
                // A date's limits are seconds since 2001, as Xcode writes them.
                let seconds = date.timeIntervalSinceReferenceDate
                if let min = attribute.minValue, seconds < min { fail(attribute.name, "\(value) is before the earliest date \(Date(timeIntervalSinceReferenceDate: min))") }
                if let max = attribute.maxValue, seconds > max { fail(attribute.name, "\(value) is after the latest date \(Date(timeIntervalSinceReferenceDate: max))") }
            } else if let number = value.numericValue {
                if let min = attribute.minValue, number < min { fail(attribute.name, "\(value) is below the minimum \(min)") }
                if let max = attribute.maxValue, number > max { fail(attribute.name, "\(value) is above the maximum \(max)") }
            }
            var length: Int?
            if case .string(let text) = value { length = text.count }
            if case .data(let data) = value { length = data.count }
            if let length {
                if let min = attribute.minLength, length < min { fail(attribute.name, "length \(length) is shorter than \(min)") }
                if let max = attribute.maxLength, length > max { fail(attribute.name, "length \(length) is longer than \(max)") }
            }
            if let pattern = attribute.pattern, case .string(let text) = value {
                if let regex = patterns[pattern] ?? (try? NSRegularExpression(pattern: "^(?:\(pattern))$")) {
                    patterns[pattern] = regex
                    let range = NSRange(text.startIndex..., in: text)
                    if regex.firstMatch(in: text, range: range) == nil {
                        fail(attribute.name, "\(value) does not match the pattern \(pattern)")
                    }
                } else {
                    fail(attribute.name, "the model's pattern \(pattern) is not a valid regular expression")
                }
            }
        }
        // Tested once, not per relationship: the loop copies each relationship's description.
        for (index, relationship) in (entity.hasRelationshipRules ? entity.relationships : []).enumerated() {
            if let slot = object.entity.toOneSlot[index] {
                if !relationship.description.isOptional && object.toOne[slot] == nil {
                    fail(relationship.name, "is required but has no object")
                }
                continue
            }
            let count: Int
            if let loaded = object.toMany[index] {
                count = loaded.ids.count
            } else if relationship.description.minCount != nil || relationship.description.maxCount != nil
                        || !relationship.description.isOptional {
                count = (try? loadedToMany(object, index).ids.count) ?? 0
            } else {
                continue
            }
            if count == 0 {
                // An optional relationship may be empty whatever its minimum (as in Core Data).
                if !relationship.description.isOptional { fail(relationship.name, "is required but is empty") }
            } else if let min = relationship.description.minCount, count < min {
                fail(relationship.name, "holds \(count) objects, fewer than \(min)")
            }
            if let max = relationship.description.maxCount, count > max { fail(relationship.name, "holds \(count) objects, more than \(max)") }
        }
        // The model class's own rules: per value (every attribute of an insert, the changed ones of an update), where
        // the class may have them; per insert or update, and for any save.
        if object.isInserted {
            if entity.validatesValues {
                for (index, name) in entity.attributeNames.enumerated() {
                    Self.collect(&failures, of: object, key: name) { try object.validateValue(object.values[index], forKey: name) }
                }
            }
            Self.collect(&failures, of: object) { try object.validateForInsert() }
        } else {
            for name in entity.validatesValues ? object.changedKeys() : [] {
                guard let index = entity.attributeIndex[name] else { continue }
                Self.collect(&failures, of: object, key: name) { try object.validateValue(object.values[index], forKey: name) }
            }
            Self.collect(&failures, of: object) { try object.validateForUpdate() }
        }
        Self.collect(&failures, of: object) { try object.validateForSave() }
    }

    // MARK: Change set

    func makeChangeSet() throws -> ChangeSet {
        // Every object takes the permanent IDs saves have assigned so far, and the set says how far that is: a save
        // landing before the set is read makes its parent rename it.
        adoptPermanentIDsIfNeeded()
        var changes = ChangeSet()
        changes.namesCurrentAt = adoptedSaveCount
        for object in conflictChecks.values where !object.isInserted && object.state === self {
            if let version = object.committedVersionIfAny { changes.checked.append((object.storedObjectID, version)) }
        }
        changes.inserted.reserveCapacity(insertionOrder.count)
        // In insertion order, so new rows' keys follow the order objects were inserted in (fetch ties rely on it).
        for object in pendingInserts {
            changes.inserted.append(ChangeSet.Row(
                objectID: object.storedObjectID, version: 0, values: object.values, toOne: object.toOne,
                changedAttributes: [], changedToOne: []))
            appendToMany(of: object, to: &changes)
        }
        let layers = self.layers
        changes.updated.reserveCapacity(updated.count)
        // The previous row's changed attributes: the usual large save changes the same ones in every object, and
        // rows that share the list share its storage (one allocation per save, not per row, and what the store reads
        // row after row stays in the cache).
        var previousChange: [Int] = []
        for object in updated.objects where !object.isDeleted && !object.isFaultStorage {
            guard let version = object.committedVersionIfAny else { continue }
            // Linked to or away from through an inverse only, and gone below: there is no row to change, and this
            // context no longer shows it.
            if !goneBelow.isEmpty && object.changesOnlyLists && goneBelow.contains(object.objectID) { continue }
            // Compared in place, value by value (words where they decide), without building the committed snapshot.
            let (values, committedValues) = (object.values, object.committedAttributes)
            // A value set back to the committed one after a child's pending row changed it still differs from what
            // that row will write: it is a change of this set too. Only the keys a row changed count: its other
            // keys show what this context showed when it arrived, this context's own edits included.
            let layered = layers.isEmpty ? [] : layers.reversed().compactMap { layer in
                layer.place(of: object.objectID).map { $0.inserted ? (layer.inserted[$0.position], true) : (layer.updated[$0.position], false) }
            }
            func changed(_ index: Int) -> Bool {
                if values.differs(from: committedValues, at: index) { return true }
                guard let (row, _) = layered.first(where: { $0.1 || $0.0.changedAttributes.contains(index) }) else { return false }
                return values.differs(from: row.values, at: index)
            }
            var matched = 0
            let asBefore = values.indices.allSatisfy { index in
                guard changed(index) else { return true }
                guard matched < previousChange.count, previousChange[matched] == index else { return false }
                matched += 1
                return true
            } && matched == previousChange.count
            if !asBefore { previousChange = values.indices.filter(changed) }
            let changedAttributes = previousChange
            let changedToOne = object.toOne.indices.filter { slot in
                if !isSameLink(object.toOne[slot], object.committedDestinations[slot]) { return true }
                guard let (row, _) = layered.first(where: { $0.1 || $0.0.changedToOne.contains(slot) }) else { return false }
                return object.toOne[slot] != row.toOne[slot]
            }
            if !changedAttributes.isEmpty || !changedToOne.isEmpty {
                changes.updated.append(ChangeSet.Row(
                    objectID: object.storedObjectID, version: version, values: values, toOne: object.toOne,
                    changedAttributes: changedAttributes, changedToOne: changedToOne, committedValues: committedValues))
            }
            appendToMany(of: object, to: &changes)
        }
        for object in deleted.values {
            changes.deleted.append((object.objectID, object.committedVersionIfAny ?? 0))
        }
        return changes
    }

    /// Every changed to-many relationship: the store rewrites those it keeps in join tables or order columns, and a
    /// parent reads all of them when this change set is one of its layers.
    private func appendToMany(of object: ManagedObject, to changes: inout ChangeSet) {
        // Most changed objects loaded no to-many: nothing is copied for them.
        guard let extras = object.extras, !extras.toMany.isEmpty else { return }
        for (index, contents) in extras.toMany {
            // The relationship read in place: a copy of its description retained every string it holds.
            let isOrdered = object.entity.relationships[index].isOrdered
            let before = extras.committedToMany[index] ?? RelatedIDs()
            if !contents.isSame(as: before, ordered: isOrdered) || object.isInserted {
                changes.toMany.append(ChangeSet.ToManyContents(
                    objectID: object.objectID, relationship: object.entity.relationships[index].name, destinations: contents.ids))
            }
        }
    }

    /// `set` with every temporary ID that a save has made permanent since its names were current renamed (see
    /// ``layers``); the set itself when no name changed. `reindex` rebuilds the lookups a layer is read through;
    /// otherwise a renamed set's index is dropped (IDs changed, so it no longer holds).
    ///
    /// Inserts stay inserts: a layer is written once, by the root's save of it, and then dropped, so an insert
    /// named by a temporary ID that now has a permanent one was not written; its key came from
    /// `obtainPermanentIDs`, which reserves a key and writes nothing.
    func renamedToCurrentIDs(_ set: ChangeSet, reindex: Bool) -> ChangeSet {
        let count = coordinator.saveCount
        guard set.namesCurrentAt != count else { return set }
        var mentioned: [ObjectID] = []
        for row in set.inserted + set.updated {
            mentioned.append(row.objectID)
            for case let id? in row.toOne { mentioned.append(id) }
        }
        mentioned += set.deleted.map(\.objectID)
        for contents in set.toMany { mentioned += [contents.objectID] + contents.destinations }
        let permanent = coordinator.permanentIDs(for: mentioned)
        var fixed = set
        fixed.namesCurrentAt = count
        // The usual case (nothing in the set was saved yet): nothing to rewrite.
        guard !permanent.isEmpty else { return fixed }
        func fix(_ id: ObjectID) -> ObjectID { permanent[id] ?? id }
        func fixRow(_ row: ChangeSet.Row) -> ChangeSet.Row {
            var row = row
            row.objectID = fix(row.objectID)
            row.toOne = row.toOne.map { $0.map(fix) }
            return row
        }
        fixed.inserted = set.inserted.map(fixRow)
        fixed.updated = set.updated.map(fixRow)
        fixed.deleted = set.deleted.map { (fix($0.objectID), $0.version) }
        fixed.toMany = set.toMany.map { contents in
            var contents = contents
            contents.objectID = fix(contents.objectID)
            contents.destinations = contents.destinations.map(fix)
            return contents
        }
        fixed.index = ChangeSetIndex()
        if reindex {
            fixed.buildIndex()
            if set.index.equality != nil { fixed.buildEqualityIndexes(model: model) }
        }
        return fixed
    }

    /// Drops what the layers hold of objects another context's save deleted: the rows would otherwise bring them
    /// back in fetches here, after the merge took them out of the registered objects. A layer's own deletion of one
    /// is done too: this context's save must not announce it again, or contexts merging that save would drop what
    /// they hold of the object (their own save of it fails, as the store no longer has it).
    func dropFromLayers(_ ids: Set<ObjectID>) {
        guard !receivedLayers.isEmpty, !ids.isEmpty else { return }
        layers = layers.map { layer in
            guard layer.updated.contains(where: { ids.contains($0.objectID) })
                    || layer.toMany.contains(where: { ids.contains($0.objectID) || $0.destinations.contains(where: ids.contains) })
                    || layer.deleted.contains(where: { ids.contains($0.objectID) }) else {
                return layer
            }
            var fixed = layer
            fixed.updated.removeAll { ids.contains($0.objectID) }
            fixed.toMany.removeAll { ids.contains($0.objectID) }
            // Nor is it a member of a list the layer holds: a list read through the layer would name a row that is gone.
            for index in fixed.toMany.indices { fixed.toMany[index].destinations.removeAll(where: ids.contains) }
            fixed.deleted.removeAll { ids.contains($0.objectID) }
            return fixed.reindexed(model: model)
        }
    }

    /// Brings the layers' rows of objects another context's save updated up to date: the keys a layer changed keep
    /// its values, the others take the save's, as a registered object's merge keeps its own changes. A row is a
    /// whole row, so without this its stale keys would hide the save's values from fetches here.
    ///
    /// The rows take the merged save's version too, as the registered objects do: the merge brought them up to date
    /// with it, so this context's save of them is no conflict (Core Data's merge refreshes the snapshots optimistic
    /// locking compares with). `isRootSave`: the save reached the store, which bumped each row's version by one.
    func refreshLayers(with changes: ContextChanges, isRootSave: Bool) {
        guard !receivedLayers.isEmpty else { return }
        let updatedIDs = Set(changes.updatedObjectIDs)
        guard !updatedIDs.isEmpty else { return }
        // Each layer's row rebased on the row the earlier layers made of the saved one, as `receive` rebased it on
        // its view with the earlier layers in: a later layer's unchanged keys must not undo an earlier one's change.
        var rebasedSoFar: [ObjectID: (values: AttributeValues, toOne: [ObjectID?])] = [:]
        layers = layers.map { layer in
            guard layer.updated.contains(where: { updatedIDs.contains($0.objectID) }) else { return layer }
            var fixed = layer
            for index in fixed.updated.indices where updatedIDs.contains(fixed.updated[index].objectID) {
                let row = fixed.updated[index]
                guard let saved = changes.change(for: row.objectID, temporaryID: coordinator.temporaryID(for:)).updated else { continue }
                let base = rebasedSoFar[row.objectID] ?? (saved.values, isRootSave ? permanentLinks(saved.toOne, of: changes) : saved.toOne)
                let rebased = row.rebased(on: base.values, base.toOne)
                (fixed.updated[index].values, fixed.updated[index].toOne) = rebased
                rebasedSoFar[row.objectID] = rebased
                fixed.updated[index].version = max(row.version, saved.version + (isRootSave ? 1 : 0))
            }
            return fixed.reindexed(model: model)
        }
    }

    /// Renames the layers whose names a save has made stale since they were received (see ``layers``).
    func renameLayers() {
        receivedLayers = receivedLayers.map { renamedToCurrentIDs($0, reindex: true) }
    }

    // MARK: After the store wrote

    func apply(_ result: SaveResult) {
        // Only a child can hold a version older than this save wrote: a root that never had one reads every version
        // from the store or its own objects, which the commit below brings up to date (W12's 50,000 updated rows
        // cost 2 ms to record, then stayed in memory for nothing). A child created from now on sets the flag before
        // it reads anything, and reads only what this save committed.
        if isRoot && inFlight.hasReaders.value {
            savedVersions.reserveCapacity(savedVersions.count + result.updatedRows.count)
            for (id, version) in result.updatedRows where version > 1 { savedVersions[id] = version }
        }
        for object in deleted.values {
            registered[object.objectID] = nil
            detach(object, reason: .deletionSaved)
        }
        inFlight.viewChanges.record(result.refreshed.keys)
        let mapping = result.permanentIDs
        // Versions of written rows whose objects are not updated ones (inserts a merge policy turned into updates).
        var otherVersions: [ObjectID: Int64] = [:]
        func commit(_ object: ManagedObject, version: Int64? = nil) {
            if !result.refreshed.isEmpty, let merged = result.refreshed[object.storedObjectID] {
                object.values = merged.values
                object.toOne = merged.toOne
            }
            // Inserted rows are at version 1 and not listed (see ``SaveResult``); an object whose row was not written
            // (only transient attributes changed) keeps its version.
            let version = version ?? (otherVersions.isEmpty ? nil : otherVersions[object.storedObjectID]) ?? object.committedVersionIfAny ?? 1
            // The saved row is the current one: held once until the object next changes.
            object.commitCurrentRow(version: version)
            object.committedToMany = object.toMany
        }
        // The stored ID throughout: reading `objectID` would first adopt every permanent ID of the tree, one pass
        // over the registry, only to have these loops find nothing left to do.
        for object in pendingInserts {
            if let permanent = mapping[object.storedObjectID] {
                registered.rekey(object, to: permanent)
                object.objectID = permanent
            }
        }
        if !mapping.isEmpty && model.hasRelationships { remapReferences { mapping[$0] } }
        // Committed after the remapping: the snapshots hold the permanent IDs of to-one destinations. Updated objects
        // first, found from the rows written (in key order, which the registry finds close together); a table of
        // versions by ID, filled in one order and read in another, cost a cache miss per object.
        for (id, version) in result.updatedRows {
            if let object = registered[id], object.isMarkedUpdated, !object.isDeleted {
                commit(object, version: version)
                updated.remove(object)
            } else if let object = registered[id], !object.isDeleted, !object.isFaultStorage, !object.isInserted {
                // Written from a child's layer: what this object shows of it is stored now, and a later merge must
                // not take the layer's keys for changes of this context's own.
                commit(object, version: version)
            } else {
                otherVersions[id] = version
            }
        }
        for object in pendingInserts {
            object.isInserted = false
            if !object.isDeleted { commit(object) }
        }
        insertionOrder = []
        for object in updated.objects where !object.isDeleted { commit(object) }
        updated.removeAll()
        deleted = [:]
        propagatedDeletions = []
        // Objects the merge policy settled in the store's favour, registered here but not written.
        let versions = result.refreshed.isEmpty ? [:] : result.versions
        for (id, snapshot) in result.refreshed {
            if let object = registered[id], object.committedVersionIfAny != versions[id] { fill(object, from: snapshot, awakens: false) }
        }
    }

    /// Takes the permanent IDs that saves anywhere in the tree assigned to objects registered here.
    /// A save below this context (its parent's, to the store) gave objects permanent IDs: results controllers
    /// rename the ones they hold (Core Data's child contexts keep temporary IDs until asked; a stack's main context
    /// shows what is stored).
    func noteSavedBelow() {
        guard coordinator.saveCount != adoptedSaveCount else { return }
        observation?.noteRenamed()
    }

    func adoptPermanentIDsIfNeeded() {
        let count = coordinator.saveCount
        guard count != adoptedSaveCount else { return }
        adoptedSaveCount = count
        var mapping: [ObjectID: ObjectID] = [:]
        for object in registered.temporaryObjects {
            let permanent = coordinator.resolve(object.storedObjectID)
            guard permanent != object.storedObjectID else { continue }
            mapping[object.storedObjectID] = permanent
            registered[object.storedObjectID] = nil
            // A pending deletion goes by the new ID too: left under the old one, the next save listed it twice.
            if deleted.removeValue(forKey: object.storedObjectID) != nil { deleted[permanent] = object }
            // Its rules ran already: under the new ID they must not run again, over links made since.
            if propagatedDeletions.remove(object.storedObjectID) != nil { propagatedDeletions.insert(permanent) }
            object.storedObjectID = permanent
            registered[permanent] = object
        }
        // Relationships may also name objects no longer registered here (read, then freed), whose IDs the same saves
        // made permanent: a list left naming one by its temporary ID would miss it when a delete rule or a later save
        // looks for it by its permanent one.
        guard model.hasRelationships else { return }
        remapReferences { id in
            if let permanent = mapping[id] { return permanent }
            let resolved = coordinator.resolve(id)
            return resolved == id ? nil : resolved
        }
    }

    /// Rewrites temporary IDs held in relationships to the permanent ones the store assigned (`permanent` gives
    /// the permanent ID of a temporary one it knows).
    func remapReferences(_ permanent: (ObjectID) -> ObjectID?) {
        registered.forEachObject { object in
            guard !object.entity.relationships.isEmpty, !object.isFaultStorage else { return }
            for slot in object.toOne.indices {
                if let id = object.toOne[slot], id.isTemporaryID, let new = permanent(id) { object.toOne[slot] = new }
            }
            for index in Array(object.toMany.keys) {
                // Each member looked up, rather than each entry of a save's mapping looked for among the members.
                let renamed = object.toMany[index]!.ids.compactMap { old in old.isTemporaryID ? permanent(old).map { (old, $0) } : nil }
                for (old, new) in renamed { object.toMany[index]!.replace(old, with: new) }
            }
        }
    }

    // MARK: Undoing

    func rollback() {
        // Observers hear the edits being rolled back first, then the rollback (Core Data's objects-did-change).
        observation?.process()
        // Core Data's rollback empties the undo stack: nothing it holds applies to the committed state.
        observation?.eventStates.removeAll()
        undoManager?.removeAllActions()
        let notice = notifications.hasSubscribers(for: .objectsDidChange)
            ? ContextChanges(refreshed: updated.objects.map(\.objectID) + deleted.keys, invalidated: pendingInserts.map(\.objectID)) : nil
        defer { if let notice, notice.count > 0 { notifications.post(.objectsDidChange, notice, from: self) } }
        inFlight.viewChanges.record(updated.objects.map(\.objectID) + deleted.keys)
        // Children's pushed changes go too.
        dropReceivedLayers()
        hasOwnEdits = false
        let rolledBack = Array(pendingInserts)
        for object in rolledBack {
            registered[object.storedObjectID] = nil
            detach(object, reason: .insertRolledBack)
        }
        insertionOrder = []
        for object in Array(updated.objects) + Array(deleted.values) {
            let before = object.values
            defer { object.observedReplacement(attributesBefore: before) }
            if let committed = object.committed {
                object.values = committed.values
                object.toOne = committed.toOne
            }
            object.toMany = [:]
            object.committedToMany = [:]
            object.isDeleted = false
        }
        // Every loaded list was read with the pending changes in the view: rolled-back inserts as members, objects
        // deleted or relinked then as missing. With nothing pending, each is what lies below: read again on next use.
        for object in registered.objects where !object.toMany.isEmpty {
            object.toMany = [:]
            object.committedToMany = [:]
        }
        updated.removeAll()
        deleted = [:]
        propagatedDeletions = []
        conflictChecks = [:]
        republishView()
        observation?.noteRebuild()
    }

    /// Lets go of the changes children pushed here (a rollback, or a failed write handing them back): objects whose
    /// insert only a layer holds are gone, as this context's own inserts are, objects showing a layer's row reload
    /// from below, and objects a layer deleted are back. (A layer's deletion of an object this context deleted too
    /// undoes that one as well: a rollback undoes both, and the stack's writer, which hands layers back, edits
    /// nothing of its own.)
    func dropReceivedLayers() {
        guard !layers.isEmpty else { return }
        inFlight.viewChanges.record(layers.flatMap { $0.updated.map(\.objectID) + $0.deleted.map(\.0) })
        let layerInserts = Set(layers.flatMap { $0.inserted.map(\.objectID) })
        for object in registered.objects.filter({ layerInserts.contains($0.objectID) }) { detach(object, reason: .insertRolledBack) }
        var undeleted: Set<ObjectIdentifier> = []
        for layer in layers {
            for (id, _) in layer.deleted {
                guard let object = deleted.removeValue(forKey: coordinator.resolve(id)) ?? deleted.removeValue(forKey: id) else { continue }
                object.isDeleted = false
                undeleted.insert(ObjectIdentifier(object))
            }
        }
        for object in registered.objects where !object.isFaultStorage
            && (undeleted.contains(ObjectIdentifier(object)) || layers.contains(where: { $0.index.rows[object.objectID] != nil })) {
            materializedCount.add(-1)
            object.isFaultStorage = true
            object.committed = nil
        }
        layers = []
        // The layers' links are gone from the lists of the objects they linked to.
        dropUnchangedLists()
    }

    /// The end of the context: every object detached (see ``ObjectContext``'s deinit), nothing pending.
    func tearDown() {
        for object in registered.objects + registered.heldObjects + insertionOrder + Array(updated.objects) + Array(deleted.values)
            + Array(conflictChecks.values) where object.state === self {
            detach(object, reason: .contextDeallocated)
        }
        conflictChecks = [:]
        registered.removeAll()
        insertionOrder = []
        updated.removeAll()
        deleted = [:]
        propagatedDeletions = []
        layers = []
        hasOwnEdits = false
    }

    func reset() {
        advanceQueryGeneration()
        observation?.process()
        observation?.eventStates.removeAll()
        undoManager?.removeAllActions()
        let notice = notifications.hasSubscribers(for: .objectsDidChange)
            ? ContextChanges(invalidated: registered.objects.map(\.objectID), invalidatesAll: true) : nil
        defer { if let notice { notifications.post(.objectsDidChange, notice, from: self) } }
        for object in registered.objects + registered.heldObjects where object.state === self { detach(object, reason: .contextReset) }
        deletedForGood = []
        registered.removeAll(keepingCapacity: true)
        insertionOrder = []
        layers = []
        hasOwnEdits = false
        updated.removeAll()
        deleted = [:]
        propagatedDeletions = []
        conflictChecks = [:]
        inFlight.viewChanges.recordEverything()
        republishView()
        observation?.noteRebuild()
    }

    func refresh(_ object: ManagedObject, mergeChanges: Bool) throws {
        try checkOwnership(object)
        guard !object.isInserted, !object.isFaultStorage else { return }
        let changed = mergeChanges ? object.changedKeys() : []
        // The refreshed values are what an observer judges the object by next.
        observation?.noteRefreshed(object)
        object.observedReplacement(attributesBefore: nil)
        if changed.isEmpty {
            turnIntoFault(object)
            inFlight.viewChanges.record(CollectionOfOne(object.objectID))
            return
        }
        guard let fresh = try layeredSnapshots(for: [object.objectID]).first else {
            throw ObjectGraphError.objectNotFound(object.objectID)
        }
        for (index, attribute) in object.entity.attributes.enumerated() where !changed.contains(attribute.name) {
            object.values[index] = fresh.values[index]
        }
        for (index, relationship) in object.entity.relationships.enumerated() where !changed.contains(relationship.name) {
            if let slot = object.entity.toOneSlot[index] { object.toOne[slot] = fresh.toOne[slot] }
        }
        object.committed = fresh
        inFlight.viewChanges.record(CollectionOfOne(object.objectID))
    }

    /// Drops a loaded object's values and changes: it reads them again, from below, on next use.
    func turnIntoFault(_ object: ManagedObject) {
        object.willTurnIntoFault()
        defer { object.didTurnIntoFault() }
        materializedCount.add(-1)
        object.isFaultStorage = true
        object.isInaccessible = false
        // The committed row first: while it is the current row, emptying the current one would keep it apart
        // (a copy) only for it to be dropped the line after.
        object.committed = nil
        object.values = .empty
        object.toOne = []
        object.toMany = [:]
        object.committedToMany = [:]
        updated.remove(object)
        object.releaseHeldDestinations()
    }

    func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        let temporary = objects.filter { $0.objectID.isTemporaryID }
        guard !temporary.isEmpty else { return }
        for object in temporary { try checkOwnership(object) }
        let mapping = try coordinator.obtainPermanentIDs(for: temporary.map(\.objectID))
        for object in temporary {
            guard let permanent = mapping[object.objectID] else { continue }
            registered[object.objectID] = nil
            object.objectID = permanent
            registered[permanent] = object
        }
        remapReferences { mapping[$0] }
    }
}
