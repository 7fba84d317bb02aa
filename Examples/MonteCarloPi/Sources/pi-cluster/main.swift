import MonteCarloPi
import SpokesCLI

// The whole Spokes tool (node, status, run, submit, demo, ...), named after this
// executable; every node it starts runs pi.sample besides the built-in kinds.
await SpokesTool.main(kinds: [PiSample()])
