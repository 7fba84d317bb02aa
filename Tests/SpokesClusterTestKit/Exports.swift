// The virtual-time cluster the tests use is the simulator's own (one implementation, in
// Sources so `simulate-cluster --model nodes` runs it too): whoever imports the kit gets it.
@_exported import SpokesSimulatedCluster
