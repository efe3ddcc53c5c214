"""The one definition of each answer's shape: serializer fields declared under the Python names they read, answered
and documented in the OpenAPI schema under camelCase names made here, and only here, from the Python ones."""

from rest_framework import serializers

# No docstrings on these classes: drf-spectacular would take one for the description of every shape built on them.


# For a serializer (plain or ModelSerializer): each field named name_like_this is answered as nameLikeThis.
class CamelCaseFields:
    def get_fields(self):
        fields = {}
        for name, field in super().get_fields().items():
            head, *rest = name.split("_")
            public = head + "".join(word.capitalize() for word in rest)
            if public != name and field.source is None:
                field.source = name
            fields[public] = field
        return fields


# Read from an object or a dict whose attributes or keys are the fields' Python names.
class Shape(CamelCaseFields, serializers.Serializer):
    pass


# Read from a model instance; Meta.fields names the model's fields as Python does.
class ModelShape(CamelCaseFields, serializers.ModelSerializer):
    pass
