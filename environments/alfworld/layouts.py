"""Room layouts for generated ALFWorld games: which receptacles a room has, which objects live in it.

The ALFRED scenes come in four kinds (kitchens, living rooms, bedrooms, bathrooms). A layout
gives, per receptacle type, how many instances a room of that kind may have (a range, so
every game gets its own layout) and the object types that can appear. Which object may sit
in which receptacle comes from ALFWorld's own ``alfworld.gen.constants``, not from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RoomKind:
    name: str
    receptacles: dict[str, tuple[int, int]]  # receptacle type -> (min, max) instances
    objects: tuple[str, ...]


KITCHEN = RoomKind("kitchen", {
    "Cabinet": (3, 8), "Drawer": (1, 5), "CounterTop": (1, 3), "Fridge": (1, 1), "Microwave": (1, 1),
    "SinkBasin": (1, 1), "StoveBurner": (2, 4), "CoffeeMachine": (1, 1), "Toaster": (0, 1),
    "GarbageCan": (1, 1), "DiningTable": (0, 1), "Shelf": (0, 3),
}, ("Apple", "Bread", "Bowl", "ButterKnife", "Cup", "DishSponge", "Egg", "Fork", "Kettle", "Knife", "Ladle",
    "Lettuce", "Mug", "Pan", "Plate", "Pot", "Potato", "SaltShaker", "PepperShaker", "SoapBottle", "Spatula",
    "Spoon", "Tomato", "WineBottle"))

LIVING_ROOM = RoomKind("living room", {
    "Sofa": (1, 1), "ArmChair": (0, 2), "CoffeeTable": (1, 2), "SideTable": (1, 2), "TVStand": (0, 1),
    "Drawer": (0, 4), "Cabinet": (0, 4), "Shelf": (0, 3), "DiningTable": (0, 1), "Dresser": (0, 1),
    "GarbageCan": (0, 1), "Ottoman": (0, 1),
}, ("Box", "CreditCard", "KeyChain", "Laptop", "Newspaper", "Pillow", "RemoteControl", "Statue", "Vase", "Watch",
    "WateringCan", "Book", "CellPhone", "Plate", "Bowl", "TissueBox", "Pen", "Pencil"))

BEDROOM = RoomKind("bedroom", {
    "Bed": (1, 1), "Desk": (0, 1), "SideTable": (1, 2), "Dresser": (0, 1), "Drawer": (1, 6), "Shelf": (0, 4),
    "GarbageCan": (0, 1), "ArmChair": (0, 1), "Safe": (0, 1), "LaundryHamper": (0, 1),
}, ("AlarmClock", "BaseballBat", "BasketBall", "Book", "CD", "CellPhone", "CreditCard", "KeyChain", "Laptop",
    "Mug", "Pen", "Pencil", "Pillow", "TennisRacket", "Bowl", "Box", "Cloth", "Watch"))

BATHROOM = RoomKind("bathroom", {
    "Toilet": (1, 1), "SinkBasin": (1, 2), "BathtubBasin": (0, 1), "Cabinet": (1, 4), "CounterTop": (1, 1),
    "Drawer": (0, 4), "GarbageCan": (1, 1), "TowelHolder": (0, 1), "HandTowelHolder": (0, 1),
    "ToiletPaperHanger": (1, 1), "Shelf": (0, 2),
}, ("Candle", "Cloth", "DishSponge", "HandTowel", "Plunger", "ScrubBrush", "SoapBar", "SoapBottle",
    "SprayBottle", "ToiletPaper", "Towel", "TissueBox"))

ROOMS = (KITCHEN, LIVING_ROOM, BEDROOM, BATHROOM)

# Receptacles a desk lamp can stand on (look_at_obj_in_light needs one lamp in the room).
LAMP_STANDS = ("Desk", "SideTable", "Dresser")

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)

# What a task type needs from the room, and which ALFWorld object property the target must have.
TASK_ROOMS = {
    "pick_and_place_simple": ROOMS,
    "look_at_obj_in_light": (LIVING_ROOM, BEDROOM),
    "pick_clean_then_place_in_recep": (KITCHEN, BATHROOM),
    "pick_heat_then_place_in_recep": (KITCHEN,),
    "pick_cool_then_place_in_recep": (KITCHEN,),
    "pick_two_obj_and_place": ROOMS,
}
TASK_PROPERTY = {
    "pick_clean_then_place_in_recep": "Cleanable",
    "pick_heat_then_place_in_recep": "Heatable",
    "pick_cool_then_place_in_recep": "Coolable",
}
# The appliance a transformation uses is never the goal receptacle ("put a hot mug in the microwave").
TASK_APPLIANCE = {
    "pick_clean_then_place_in_recep": "SinkBasin",
    "pick_heat_then_place_in_recep": "Microwave",
    "pick_cool_then_place_in_recep": "Fridge",
}
