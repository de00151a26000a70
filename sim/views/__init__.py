"""The views of a world: the scene every viewer draws (:mod:`.scene`: bodies captured once, frames that move
them; posed in a viewer's own PyBullet client, :mod:`.mirror`), the PyBullet GUI viewer in its own process
(:mod:`.gui`, what it is sent :mod:`.frames`, what it draws over the scene :mod:`.overlay`) and the web view
in the browser and notebooks (:mod:`.web`)."""
