/// A query's filter: a field comparison, or an `and`/`or` of filters.
public indirect enum Filter: Sendable, Equatable {
    /// One comparison on one field.
    case field(FieldFilter)
    /// Every filter must hold.
    case and([Filter])
    /// At least one filter must hold.
    case or([Filter])

    /// Every field comparison in the tree, depth first.
    public var fieldFilters: [FieldFilter] {
        switch self {
        case .field(let f): return [f]
        case .and(let items), .or(let items): return items.flatMap(\.fieldFilters)
        }
    }

    /// True when the tree holds an `or` with more than one branch.
    public var hasDisjunction: Bool {
        switch self {
        case .field: return false
        case .and(let items): return items.contains(where: \.hasDisjunction)
        case .or(let items): return items.count > 1 || items.contains(where: \.hasDisjunction)
        }
    }
}

/// A comparison operator of a field filter.
public enum FilterOperator: String, Sendable, Hashable, CaseIterable {
    /// The field equals the value (query equality: `1 == 1.0`).
    case equal = "=="
    /// The field exists and differs from the value.
    case notEqual = "!="
    /// The field is below the value, within the value's type class.
    case lessThan = "<"
    /// The field is at most the value, within the value's type class.
    case lessThanOrEqual = "<="
    /// The field is above the value, within the value's type class.
    case greaterThan = ">"
    /// The field is at least the value, within the value's type class.
    case greaterThanOrEqual = ">="
    /// The field is an array holding the value.
    case arrayContains = "array-contains"
    /// The field is an array holding at least one of the values.
    case arrayContainsAny = "array-contains-any"
    /// The field equals one of the values.
    case `in` = "in"
    /// The field exists, is not null, and equals none of the values.
    case notIn = "not-in"

    /// True for Firestore's range and inequality operators (`< <= > >= != not-in`): their fields join the order.
    public var isInequality: Bool {
        switch self {
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notEqual, .notIn: return true
        default: return false
        }
    }

    /// True for `< <= > >=`, which only match values of the operand's type class.
    public var isRange: Bool {
        switch self {
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual: return true
        default: return false
        }
    }

    /// True for the operators whose value is a list (`in`, `not-in`, `array-contains-any`).
    public var takesList: Bool {
        switch self {
        case .in, .notIn, .arrayContainsAny: return true
        default: return false
        }
    }
}

/// One comparison: `field op value`. For list operators the value is an array.
public struct FieldFilter: Sendable, Equatable {
    /// The compared field; `__name__` compares the document path (values are references).
    public var field: FieldPath
    /// The comparison.
    public var op: FilterOperator
    /// The operand; an array for `in`, `not-in` and `array-contains-any`.
    public var value: Value

    /// Makes a field filter; `Query.validate()` checks it against Firestore's rules.
    public init(field: FieldPath, op: FilterOperator, value: Value) {
        self.field = field
        self.op = op
        self.value = value
    }

    /// The operand list of a list operator (empty for other operators).
    public var values: [Value] { value.arrayValue ?? [] }
}
