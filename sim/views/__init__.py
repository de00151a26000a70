"""The views of a world: the one scene that every viewer draws and the demo's renders record (:mod:`.scene`:
the bodies, captured once, and the frames that move them), posed in a viewer's own PyBullet client
(:mod:`.mirror`); the PyBullet GUI viewer in its own process (:mod:`.gui`, with what it draws over the scene,
:mod:`.overlay`); the web view in the browser and notebooks (:mod:`.web`); and what a viewer has not taken
yet (:mod:`.pending`)."""
