/// Bad input to a command, found after parsing (a negative count, a store that cannot be read): one line saying what
/// was wrong, and a nonzero exit. ArgumentParser prints its usage after a `ValidationError`, which buries the one line
/// that matters under the whole help; it prints any other error as `Error: ` and its description alone.
struct ToolInputError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
