import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct ObjectGraphMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [EntityMacro.self, PersistedPropertyMacro.self, MarkerMacro.self]
}
