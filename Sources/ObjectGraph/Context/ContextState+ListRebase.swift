/// A to-many kept through a to-one inverse (an author's `books`, each book's `author`) lists exactly the objects a
/// context shows pointing there: its contents follow its members' to-ones. A list loaded and changed here, or
/// pushed whole by a child, holds the members as they were when it was read; the members another context moved
/// since are not its news. Both are rebased: the view below, with this context's (or the layer's) own moves on it.
///
/// Ordered lists keep their contents whole: their order is a change of its own, which a rebase would lose.
extension ContextState {
    /// The lists of to-one inverses that this context's received layers hold, rebased on what lies below now. A layer
    /// keeps a list whole, as this context showed it when the child's save arrived; what lies below changes later
    /// (the parent's edits, its other children's saves, its merges) and a list read through the layer must follow,
    /// less and plus only the members whose to-one the layers set. One read per relationship, of the lists the
    /// layers hold. Below a root is the store, which its merges change.
    func refreshLayerLists() throws {
        guard !receivedLayers.isEmpty, receivedLayers.contains(where: { !$0.toMany.isEmpty }) else { return }
        var layers = self.layers
        var groups: [String: (relationship: ModelRelationship, slot: Int, owners: [ObjectID])] = [:]
        var seen: Set<ObjectID> = []
        for layer in layers {
            for contents in layer.toMany where !seen.contains(contents.objectID)
                && !layers.contains(where: { $0.place(of: contents.objectID)?.inserted == true }) {
                let entity = try model.entity(named: contents.objectID.entityName)
                guard let index = entity.relationshipIndex[contents.relationship], !entity.relationships[index].isOrdered,
                      let slot = movingInverse(of: entity, index) else { continue }
                seen.insert(contents.objectID)
                groups["\(entity.name).\(contents.relationship)", default: (entity.relationships[index], slot, [])].owners.append(contents.objectID)
            }
        }
        guard !groups.isEmpty else { return }
        var changed = Set<Int>()
        for (_, group) in groups {
            let lists = try below.relatedIDs(of: group.owners.map { coordinator.resolve($0) }, relationship: group.relationship)
            for (owner, list) in zip(group.owners, lists) {
                var base = resolved(list)
                for position in layers.indices {
                    guard let at = layers[position].toMany.firstIndex(where: { $0.objectID == owner && $0.relationship == group.relationship.name })
                    else { continue }
                    let members = Self.members(base, moved: layers[position], to: owner, slot: group.slot, listed: layers[position].toMany[at].destinations)
                    if members != layers[position].toMany[at].destinations {
                        layers[position].toMany[at].destinations = members
                        changed.insert(position)
                    }
                    base = members
                }
            }
        }
        guard !changed.isEmpty else { return }
        for position in changed { layers[position] = layers[position].reindexed(model: model) }
        self.layers = layers
    }

    /// `view` (a list as shown beneath `layer`) with the moves `layer` makes: the members whose to-one (`slot`) the
    /// layer sets (inserted, changed, or a row it holds whole, in `baseless`) join `owner`'s list or leave it, and so
    /// do those it deletes; `listed`, the layer's own copy of the list, gives the order of the members it adds.
    static func members(
        _ view: [ObjectID], moved layer: ChangeSet, to owner: ObjectID, slot: Int, listed: [ObjectID], baseless: Set<ObjectID> = []
    ) -> [ObjectID] {
        // Whether the layer links `id` here (true), elsewhere or deletes it (false), or leaves its to-one as it was (nil).
        func linksHere(_ id: ObjectID) -> Bool? {
            if layer.deletes(id) { return false }
            guard let place = layer.place(of: id) else { return nil }
            let row = place.inserted ? layer.inserted[place.position] : layer.updated[place.position]
            guard place.inserted || row.changedToOne.contains(slot) || baseless.contains(id) else { return nil }
            return row.toOne[slot] == owner
        }
        var members = view.filter { linksHere($0) ?? true }
        let kept = Set(members)
        members += listed.filter { !kept.contains($0) && linksHere($0) == true }
        return members
    }

    /// `layer` with each list it holds of a to-one inverse made the list this context shows now, with the moves of
    /// the members whose to-one the layer sets (inserted, or the slot changed) applied: the child read the rest of
    /// the list earlier, and what it read may have been overtaken here (another child's save, this context's edit, a
    /// merge). A list of an object the layer inserts is the child's alone, and stays whole. A row in `baseless` (an
    /// object this context does not show, see ``rebased(_:baseless:)``) is whole too: every to-one of it is the layer's.
    func rebasedLists(_ layer: ChangeSet, baseless: Set<ObjectID>) throws -> ChangeSet {
        guard !layer.toMany.isEmpty else { return layer }
        var views: [Int: (slot: Int, members: [ObjectID])] = [:]
        var unloaded: [String: (relationship: ModelRelationship, slot: Int, positions: [Int])] = [:]
        for (position, contents) in layer.toMany.enumerated() where layer.place(of: contents.objectID)?.inserted != true {
            let entity = try model.entity(named: contents.objectID.entityName)
            guard let index = entity.relationshipIndex[contents.relationship], !entity.relationships[index].isOrdered,
                  let slot = movingInverse(of: entity, index) else { continue }
            if let owner = registered[contents.objectID], !owner.isFaultStorage, let loaded = owner.toMany[index] {
                views[position] = (slot, loaded.ids)
            } else {
                unloaded["\(entity.name).\(contents.relationship)", default: (entity.relationships[index], slot, [])].positions.append(position)
            }
        }
        for (_, group) in unloaded {
            let owners = group.positions.map { layer.toMany[$0].objectID }
            let lists = try layeredRelatedIDs(of: owners, relationship: group.relationship)
            for (position, (owner, list)) in zip(group.positions, zip(owners, lists)) {
                views[position] = (group.slot, currentMembers(resolved(list), of: owner, inverseSlot: group.slot))
            }
        }
        var fixed = layer
        for (position, view) in views {
            let contents = layer.toMany[position]
            let members = Self.members(view.members, moved: layer, to: contents.objectID, slot: view.slot, listed: contents.destinations, baseless: baseless)
            if members != contents.destinations { fixed.toMany[position].destinations = members }
        }
        return fixed.toMany.elementsEqual(layer.toMany, by: { $0.destinations == $1.destinations }) ? layer : fixed.reindexed(model: model)
    }

    /// `layer` with each link a row in `baseless` holds (an object this context does not show, whose row the layer
    /// holds whole) put on its destination's inverse list, when that list is a to-many the layer does not hold or
    /// holds without it: below lists the object nowhere, and the rebase of lists (``rebasedLists(_:baseless:)``)
    /// then makes the destination's list what this context shows, the object included. A destination the child
    /// inserted keeps the list the child gave it.
    func listingBaselessLinks(_ layer: ChangeSet, baseless: Set<ObjectID>) throws -> ChangeSet {
        guard !baseless.isEmpty else { return layer }
        var fixed = layer
        var added = false
        for row in layer.updated where baseless.contains(row.objectID) {
            let entity = try model.entity(named: row.objectID.entityName)
            for (index, relationship) in entity.relationships.enumerated() {
                guard let slot = entity.toOneSlot[index], let destination = row.toOne[slot], !destination.isTemporaryID,
                      let (destinationEntity, inverseIndex) = try inverse(of: relationship) else { continue }
                let inverse = destinationEntity.relationships[inverseIndex]
                guard inverse.isToMany, !inverse.isOrdered else { continue }
                if let at = fixed.toMany.firstIndex(where: { $0.objectID == destination && $0.relationship == inverse.name }) {
                    guard !fixed.toMany[at].destinations.contains(row.objectID) else { continue }
                    fixed.toMany[at].destinations.append(row.objectID)
                } else {
                    fixed.toMany.append(ChangeSet.ToManyContents(objectID: destination, relationship: inverse.name, destinations: [row.objectID]))
                }
                added = true
            }
        }
        return added ? fixed.reindexed(model: model) : layer
    }

    /// An insert's loaded lists of to-one inverses have nothing below to be read again from: they take `layer`'s
    /// moves here, as a rebase gives a stored owner's lists (members the layer links to the insert join it, those it
    /// links elsewhere or deletes leave). A list the layer holds is the layer's, which ``show(_:accepts:)`` puts in
    /// place.
    func moveInsertsLists(by layer: ChangeSet, baseless: Set<ObjectID>) throws {
        guard !layer.inserted.isEmpty || !layer.deleted.isEmpty || layer.updated.contains(where: { !$0.changedToOne.isEmpty }) else { return }
        for owner in insertionOrder where !owner.isDeleted && !owner.isFaultStorage && !owner.toMany.isEmpty {
            var moved: [(index: Int, members: [ObjectID])] = []
            for (index, list) in owner.toMany {
                let relationship = owner.entity.relationships[index]
                guard !relationship.isOrdered, layer.index.toMany[owner.objectID]?[relationship.name] == nil,
                      let slot = movingInverse(of: owner.entity, index), let (memberEntity, _) = try inverse(of: relationship) else { continue }
                // A member this context deleted stays out: its deletion stands over the child's change.
                let joining = (layer.inserted + layer.updated).lazy.filter { row in
                    !self.isHidden(row.objectID) && row.toOne[slot].map(self.resolvedLink) == self.resolvedLink(owner.objectID)
                        && self.model.entityIfPresent(row.objectID.entityName)?.isKind(of: memberEntity) == true
                }.map(\.objectID)
                let members = Self.members(list.ids, moved: layer, to: owner.objectID, slot: slot, listed: list.ids + joining, baseless: baseless)
                if members != list.ids { moved.append((index, members)) }
            }
            for (index, members) in moved { owner.toMany[index] = RelatedIDs(members) }
        }
    }

    /// Reads again, in one read per relationship, each list of `changed` (objects, and the positions of lists of a
    /// to-one inverse they changed here) from below, and puts this context's own links back on it: the members that
    /// show their own state here (``showsOwnState(_:)``), point to the object, and that below does not list. The members it moved away point
    /// elsewhere here, and ``currentMembers(_:of:inverseSlot:)`` leaves them out as it does at every load.
    func rebaseChangedLists(_ changed: [(object: ManagedObject, index: Int)]) throws {
        var groups: [String: [(object: ManagedObject, index: Int)]] = [:]
        for entry in changed { groups["\(entry.object.entity.name).\(entry.index)", default: []].append(entry) }
        for (_, group) in groups {
            let relationship = group[0].object.entity.relationships[group[0].index]
            guard let slot = movingInverse(of: group[0].object.entity, group[0].index) else { continue }
            let lists = try layeredRelatedIDs(of: group.map(\.object.objectID), relationship: relationship)
            let ownLinks = ownLinks(to: group.map(\.object), through: group[0].index)
            for ((object, index), list) in zip(group, lists) {
                let before = object.toMany[index]?.ids ?? []
                var contents = install(list, asToMany: index, of: object, inverseSlot: slot, ownLinks: ownLinks[object.objectID] ?? [])
                for id in before where !contents.contains(id) {
                    if isOwnLink(id, to: object.objectID, slot: slot) { contents.append(id) }
                }
                object.toMany[index] = contents
            }
        }
    }

    /// Whether `member` links to `owner` (at to-one `slot`) as this context shows it on its own: a member showing its
    /// own state here (changed, or held by a layer) keeps its link; one with nothing pending follows below, which
    /// may have deleted or moved it since.
    func isOwnLink(_ member: ObjectID, to owner: ObjectID, slot: Int) -> Bool {
        guard let object = registered[member], !object.isFaultStorage, !object.isDeleted, links(object, at: slot, to: owner) else { return false }
        return showsOwnState(object)
    }

    /// Whether `list`, `owner`'s, holds a member this context links there on its own (see ``isOwnLink(_:to:slot:)``).
    func holdsOwnLink(_ list: RelatedIDs, to owner: ObjectID, slot: Int) -> Bool {
        list.ids.contains { isOwnLink($0, to: owner, slot: slot) }
    }
}
