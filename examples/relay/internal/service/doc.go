// Package service is the running relay: Relay builds the engine, the
// destinations, the route table and the inputs (from their registries,
// each with an environment), wires taps, sources, the API and metrics,
// and runs them with one shutdown sequence; it reloads routes and the
// sources policy. It imports the rooms below it and none above.
package service
