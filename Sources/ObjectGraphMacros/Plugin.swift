import SwiftCompilerPlugin
import SwiftSyntaxMacros

// The compiler asks for each macro by this module's name (`#externalMacro(module: "ObjectGraphMacros", ...)`).
// Their tests (EntityMacroExpansionTests) run the compiler with this plugin, so no test target links swift-syntax,
// which would compile it a second time, for the tests, beside the plugin's own copy.
@main
struct ObjectGraphMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [EntityMacro.self, PersistedPropertyMacro.self, MarkerMacro.self, SchemaMarkerMacro.self]
}
