import json

inv = json.load(open("inventory.json"))["warehouses"]
print(f"{sum(i['qty'] * i['price'] for i in inv['B']):.2f}")
