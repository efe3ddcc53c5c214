"""
The one definition of each answer's shape: a serializer whose fields are declared under the Python names they
read and are answered, and documented in the OpenAPI schema, under their camelCase names. The API's public
names are made here, and only here, from the Python ones.
"""

import functools

from rest_framework import serializers


def camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


# No docstrings on these classes: drf-spectacular would take one for the description of every shape built on them.


# For a serializer (plain or ModelSerializer): each field named name_like_this is answered as nameLikeThis.
class CamelCaseFields:
    def get_fields(self):
        fields = {}
        for name, field in super().get_fields().items():
            public = camel_case(name)
            if public != name and field.source is None:
                field.source = name
            fields[public] = field
        return fields


# An answer's shape, read from an object or a dict whose attributes or keys are the fields' Python names.
class Shape(CamelCaseFields, serializers.Serializer):
    @classmethod
    def represent(cls, instance) -> dict:
        # What Shape(instance).data gives, for a shape without context whose attributes are JSON values already
        # (text, numbers, booleans, None): its public names, read once from its fields, over the attributes as
        # they are. On the invocation path, building a serializer per call cost a tenth of the work and DRF's
        # per-field conversion 1.2 %, which the agent_list_modes budget has no room for (benchmarks/RESULTS.md).
        return {name: getattr(instance, source) for name, source in _sources(cls)}


@functools.cache
def _sources(shape) -> tuple[tuple[str, str], ...]:
    return tuple((name, field.source) for name, field in template(shape).fields.items())


@functools.cache
def template(serializer_class):
    """
    One instance of a serializer class, made without data or context, its fields bound once: for the
    serializers that share them (to_representation and validation keep nothing in a field).
    """
    return serializer_class()


# An answer's shape read from a model instance; Meta.fields names the model's fields as Python does.
class ModelShape(CamelCaseFields, serializers.ModelSerializer):
    pass
