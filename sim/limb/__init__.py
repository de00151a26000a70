"""The soft limb's physics in a PyBullet world: the compliant chain's implicit spring-damper step
(:mod:`.dynamics`), tendon actuation (:mod:`.tendons`), opt-in transverse shear (:mod:`.shear`), a limb's
joints over one body or several (:mod:`.joints`) and limbs loaded as several bodies (:mod:`.parts`), with
the compiled chain kernels below them (:mod:`.chain`: kinematics, Newton–Euler, the implicit and
articulated-body solves, springs, tendons)."""
