/// What a task holds on its worker while it runs, and so which of the worker's two
/// budgets it draws on (issue 17 §1). A ``TaskRequest`` carries it, so the worker knows
/// which budget an attempt takes; a coordinator asks ``Systems`` for a place of that cost.
///
/// - ``cpu``: it computes. It holds one of the worker's cpu slots (`node.slots`, by
///   default the cores this process may run on), so a node runs about as many at once
///   as it has cores. Simulations at time scale 0, numeric work, parsing.
/// - ``waiting``: it mostly awaits sleeps or remote calls. It holds one of the worker's
///   waiting slots (`node.waiting_slots`, thousands by default, bounded by memory), so
///   one node carries thousands at once. A real-time bike user (its moves sleep), a task
///   that calls a web service. Coordinators spread them over the workers least loaded
///   first.
public enum TaskCost: String, Sendable, Hashable, Codable { case cpu, waiting }
