from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0002_recommendation_json_encoder"),
    ]

    operations = [
        migrations.AddField(
            model_name="device",
            name="profile",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="device",
            name="torch_version",
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name="device",
            name="processor",
            field=models.CharField(blank=True, max_length=300),
        ),
    ]
