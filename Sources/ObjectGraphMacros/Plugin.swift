import ObjectGraphMacroExpansions
import SwiftCompilerPlugin
import SwiftSyntaxMacros

// The compiler asks for each macro by this module's name (`#externalMacro(module: "ObjectGraphMacros", ...)`), so
// each is a subclass declared here. The expansions live in ObjectGraphMacroExpansions, a plain library, so that
// their tests do not depend on a macro target: SwiftPM builds a package's whole test product for the host when one
// test target does, which compiles every dependency (SwiftNIO and BoringSSL included) twice.

final class EntityMacro: ObjectGraphMacroExpansions.EntityMacro {}
final class PersistedPropertyMacro: ObjectGraphMacroExpansions.PersistedPropertyMacro {}
final class MarkerMacro: ObjectGraphMacroExpansions.MarkerMacro {}
final class SchemaMarkerMacro: ObjectGraphMacroExpansions.SchemaMarkerMacro {}

@main
struct ObjectGraphMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [EntityMacro.self, PersistedPropertyMacro.self, MarkerMacro.self, SchemaMarkerMacro.self]
}
