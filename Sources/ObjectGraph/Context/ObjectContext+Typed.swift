extension ObjectContext {
    /// Inserts a new object of a macro entity class.
    ///
    /// ```swift
    /// let book = try ctx.insert(Book.self)
    /// book.title = "Dune"
    /// ```
    public func insert<T: ManagedEntity>(_ type: T.Type) throws -> T {
        state.checkExecutor()
        return try state.insert(type)
    }

    /// The object for `id` as a macro entity class, loaded; throws when no row exists or the class does not match.
    public func existingObject<T: ManagedEntity>(with id: ObjectID, as type: T.Type) throws -> T {
        state.checkExecutor()
        return try state.existingObject(with: id, as: type)
    }
}

extension ContextState {
    func insert<T: ManagedEntity>(_ type: T.Type) throws -> T {
        let object = try insert(try model.entity(for: T.self))
        guard let typed = object as? T else {
            throw ObjectGraphError.invalidModel(
                entity: object.entity.name, property: nil, reason: "the model was not built with the class \(T.self); build it with Model([\(T.self).self, ...])")
        }
        return typed
    }

    func existingObject<T: ManagedEntity>(with id: ObjectID, as type: T.Type) throws -> T {
        let object = try existingObject(with: id)
        guard let typed = object as? T else {
            throw ObjectGraphError.wrongDestination(entity: id.entityName, key: "objectID", expected: "\(T.self)", got: "\(Swift.type(of: object))")
        }
        return typed
    }
}
