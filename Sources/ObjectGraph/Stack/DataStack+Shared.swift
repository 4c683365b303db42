import Foundation

extension DataStack {
    /// The stack the one-line helpers use: the seeds' `registDatabaseFileName` and `registModelFileName` in one.
    @MainActor public static var shared: DataStack?

    /// Opens a stack and makes it the shared one.
    ///
    /// ```swift
    /// try DataStack.register(databaseFileName: "db.sqlite", model: Model([Book.self]))
    /// ```
    @MainActor @discardableResult
    public static func register(databaseFileName: String, directory: URL? = nil, model: Model, layout: Layout = .nested) throws -> DataStack {
        let stack = try DataStack(databaseFileName: databaseFileName, directory: directory, model: model, layout: layout)
        shared = stack
        return stack
    }

    @MainActor
    static func current(_ stack: DataStack?) throws -> DataStack {
        guard let stack = stack ?? shared else {
            throw ObjectGraphError.invalidFetch(entity: "DataStack", reason: "no stack is registered: call DataStack.register(databaseFileName:model:) or pass a stack")
        }
        return stack
    }
}
