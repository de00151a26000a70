"""MJCF export with the material: a robot's dynamic chain for MuJoCo, its joints sprung and damped as in a
dynamic :class:`~pccbullet.sim.world.World`.

:func:`pccbullet.sim.mjcf.writer.write_mjcf` writes the file (``pccbullet mjcf ROBOT --out DIR``);
:mod:`pccbullet.sim.mjcf.material` turns a limb's material and medium into MuJoCo's joint, body and fluid
parameters and argues each choice. The guide: ``docs/guide/mujoco-and-attach.md``.
"""
