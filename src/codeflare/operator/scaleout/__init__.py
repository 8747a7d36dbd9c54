"""Node scale-out (InstaScale's role): grow MachineSets/MachineDeployments for capacity-pending work."""
