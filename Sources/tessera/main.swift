import Tessera
print("tessera")
