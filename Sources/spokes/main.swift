print("spokes")
