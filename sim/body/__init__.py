"""A robot's body in a world: fixed, free or moved (:mod:`~pccbullet.sim.body.mode`), along a trajectory
(:mod:`~pccbullet.sim.body.trajectory`), loaded with its limbs welded on and its fluid forces
(:mod:`~pccbullet.sim.body.carrier`)."""
