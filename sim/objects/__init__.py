"""What a limb meets in a world: objects a user places (:mod:`.place`: spheres, cylinders, boxes of a
material), their handle (:mod:`.placed`: pose, contact forces, the medium's forces each step), how a fluid
acts on them (:mod:`.fluid`), friction between silicone and their materials (:mod:`.friction`), and the
environment around the robot (:mod:`.environment`: seabed, contact forces per link, the force sensor)."""
