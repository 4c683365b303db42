/// The refusal of a PostgreSQL command by a tool built without the `Postgres` trait (the default, which builds no
/// SwiftNIO): `problem` says what cannot be done, and the message how to build the tool that can.
func withoutPostgres(_ problem: String) -> ToolInputError {
    ToolInputError("\(problem): this objectgraph is built without PostgreSQL; build it with the Postgres trait (swift run --traits Postgres objectgraph ...)")
}
