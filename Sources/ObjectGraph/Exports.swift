// Predicates are part of ObjectGraph's API (fetch requests carry them): one import gives both.
@_exported import PredicateFormat
